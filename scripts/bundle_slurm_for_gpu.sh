#!/bin/bash
# Copies this Debian 12 machine's Slurm and munge into a folder that bench/slurm_gpu.sh installs
# on the GPU machine (Ubuntu 24.04, root, no package registry, no Slurm):
#
#   scripts/bundle_slurm_for_gpu.sh [DEST]      (default .gpu/slurm)
#
# DEST/root/ mirrors the paths Debian's packages use, because Slurm finds some of its parts at
# paths fixed when it was built: slurmd starts /usr/sbin/slurmstepd, and the plugins are loaded
# from /usr/lib/x86_64-linux-gnu/slurm-wlm (also the binaries' RUNPATH, for libslurmfull.so):
#   root/usr/sbin/   slurmctld slurmd slurmstepd munged
#   root/usr/bin/    sbatch squeue sacct scancel sinfo srun scontrol sdiag munge unmunge
#   root/usr/lib/x86_64-linux-gnu/slurm-wlm/   libslurmfull.so and every plugin
# DEST/lib/ holds the shared libraries they need beyond glibc (from ldd), for the GPU machine to
# take the ones it lacks; DEST/MANIFEST says what was copied from which package version, with
# sha256 sums. Needs slurmctld, slurmd, slurm-client and munge installed here
# (`apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge`).
set -euo pipefail

dest=${1:-.gpu/slurm}
plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm
sbin=(slurmctld slurmd slurmstepd munged)
bin=(sbatch squeue sacct scancel sinfo srun scontrol sdiag munge unmunge)
# glibc's own libraries come from the GPU machine (its glibc is newer, so these binaries run there).
glibc='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux-x86-64)\.so'

for tool in "${sbin[@]}"; do
  [[ -e /usr/sbin/$tool ]] || { echo "/usr/sbin/$tool is missing: apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge" >&2; exit 3; }
done
for tool in "${bin[@]}"; do
  [[ -e /usr/bin/$tool ]] || { echo "/usr/bin/$tool is missing: apt-get install -y --no-install-recommends slurm-client munge" >&2; exit 3; }
done
[[ -f $plugins/libslurmfull.so ]] || { echo "$plugins/libslurmfull.so is missing: install slurm-wlm-basic-plugins" >&2; exit 3; }

rm -rf "$dest"
mkdir -p "$dest/root/usr/sbin" "$dest/root/usr/bin" "$dest/root$plugins" "$dest/lib"
for tool in "${sbin[@]}"; do cp -L "/usr/sbin/$tool" "$dest/root/usr/sbin/$tool"; done
for tool in "${bin[@]}"; do cp -L "/usr/bin/$tool" "$dest/root/usr/bin/$tool"; done
# Plugins as files (Debian keeps a few as symlinks to others).
for plugin in "$plugins"/*; do
  [[ -f $plugin ]] && cp -L "$plugin" "$dest/root$plugins/"
done

# The libraries all of them load, by soname, resolved here.
missing=0
while read -r soname path; do
  [[ $soname =~ $glibc ]] && continue
  [[ $path == "$plugins"/* ]] && continue  # in the bundle already
  if [[ $path == "not" || ! -f $path ]]; then
    echo "ldd: $soname not found here" >&2
    missing=1
    continue
  fi
  cp -L "$path" "$dest/lib/$soname"
done < <(for file in "$dest"/root/usr/sbin/* "$dest"/root/usr/bin/* "$dest/root$plugins"/*; do
  ldd "$file" 2>/dev/null | awk '$2 == "=>" {print $1, $3}'
done | sort -u)
[[ $missing == 0 ]] || { echo "some libraries were not found; the bundle is incomplete" >&2; exit 4; }

{
  echo "# kiln's Slurm bundle for the GPU machine, made $(date -u +%FT%TZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  dpkg-query -W -f='# ${Package} ${Version}\n' slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge libmunge2 2>/dev/null || true
  (cd "$dest" && find root lib -type f | sort | xargs sha256sum)
} > "$dest/MANIFEST"
echo "bundled Slurm $(/usr/sbin/slurmctld -V | awk '{print $2}') and munge into $dest: $(du -sh "$dest" | cut -f1), $(find "$dest" -type f | wc -l) files ($(ls "$dest/lib" | wc -l) shared libraries beyond glibc)"
