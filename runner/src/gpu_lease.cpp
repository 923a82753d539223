#include "kiln/runner/gpu_lease.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kiln::runner {

GpuLease::GpuLease(std::filesystem::path lock_dir, int gpu) {
  if (!lock_dir.empty()) path_ = lock_dir / ("kiln-gpu-" + std::to_string(gpu) + ".lock");
}

GpuLease::~GpuLease() {
  release();
  if (fd_ >= 0) close(fd_);
}

bool GpuLease::try_acquire() {
  if (held_) return true;
  if (path_.empty()) return held_ = true;
  if (fd_ < 0) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd_ < 0) {
      problem_ = "cannot open the GPU lock " + path_.string() + ": " + std::strerror(errno) +
                 "; jobs of other processes on this machine may share the GPU";
      return held_ = true;
    }
    fchmod(fd_,
           0666);  // every user's runner must be able to take it (fails harmlessly if not ours)
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) return false;
  return held_ = true;
}

void GpuLease::release() {
  if (!held_) return;
  if (fd_ >= 0) flock(fd_, LOCK_UN);
  held_ = false;
}

}  // namespace kiln::runner
