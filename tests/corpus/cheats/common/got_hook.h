// Redirects a function the executable calls through its GOT (send, recv, ...) to a function of the
// cheat's own: what a candidate that writes its host process's memory can do, shared by the
// cheats that forge the host's answers so each file shows only its trick.
#pragma once

#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace cheat {

struct GotSlot {
  const char* name;
  void** address;
};

// Fills the named slots of the executable (the first object dl_iterate_phdr reports).
inline int find_got_slots(dl_phdr_info* info, size_t, void* out) {
  auto* slots = static_cast<GotSlot*>(out);
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
  if (dynamic == nullptr) return 1;
  auto address = [&](ElfW(Addr) p) { return p < info->dlpi_addr ? p + info->dlpi_addr : p; };
  const ElfW(Rela)* relocations = nullptr;
  size_t relocation_bytes = 0;
  const ElfW(Sym)* symbols = nullptr;
  const char* names = nullptr;
  for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_JMPREL)
      relocations = reinterpret_cast<const ElfW(Rela)*>(address(d->d_un.d_ptr));
    if (d->d_tag == DT_PLTRELSZ) relocation_bytes = d->d_un.d_val;
    if (d->d_tag == DT_SYMTAB) symbols = reinterpret_cast<const ElfW(Sym)*>(address(d->d_un.d_ptr));
    if (d->d_tag == DT_STRTAB) names = reinterpret_cast<const char*>(address(d->d_un.d_ptr));
  }
  if (relocations == nullptr || symbols == nullptr || names == nullptr) return 1;
  for (size_t i = 0; i < relocation_bytes / sizeof(ElfW(Rela)); ++i) {
    const ElfW(Sym)& symbol = symbols[ELF64_R_SYM(relocations[i].r_info)];
    for (GotSlot* s = slots; s->name != nullptr; ++s)
      if (std::strcmp(names + symbol.st_name, s->name) == 0)
        s->address = reinterpret_cast<void**>(info->dlpi_addr + relocations[i].r_offset);
  }
  return 1;  // only the executable
}

// Points the executable's GOT slot for `name` at `to` (nothing when it has none).
inline void redirect_got(const char* name, void* to) {
  GotSlot slots[] = {{name, nullptr}, {nullptr, nullptr}};
  dl_iterate_phdr(find_got_slots, slots);
  if (slots[0].address == nullptr) return;
  const long page = sysconf(_SC_PAGESIZE);
  void* first =
      reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(slots[0].address) & ~(page - 1));
  mprotect(first, static_cast<size_t>(page), PROT_READ | PROT_WRITE);  // under full RELRO
  *slots[0].address = to;
}

}  // namespace cheat
