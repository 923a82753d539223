#include "kiln/compiler/elf_symbols.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln::compiler {

namespace {

class Bytes {
 public:
  explicit Bytes(const std::string& data) : data_(data) {}

  bool has(uint64_t offset, uint64_t size) const {
    return offset <= data_.size() && size <= data_.size() - offset;
  }
  template <typename T>
  T at(uint64_t offset) const {
    T value{};
    std::memcpy(&value, data_.data() + offset, sizeof(T));
    return value;
  }
  // A NUL-terminated string inside [table, table + size); empty when out of range.
  std::string string_at(uint64_t table, uint64_t size, uint64_t index) const {
    if (index >= size || !has(table, size)) return {};
    const char* start = data_.data() + table + index;
    const size_t limit = size - index;
    const size_t length = strnlen(start, limit);
    return std::string(start, length);
  }

 private:
  const std::string& data_;
};

Error malformed(const std::string& what) {
  return make_error("not a valid 64-bit little-endian ELF shared object: " + what +
                    "; rebuild it with nvcc -shared");
}

}  // namespace

Result<ElfSymbols> ElfReader::read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open " + path.string() + " to read its symbols");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto parsed = parse(buffer.str());
  if (!parsed) return make_error(path.string() + ": " + parsed.error().message);
  return parsed;
}

Result<ElfSymbols> ElfReader::parse(const std::string& data) {
  const Bytes bytes(data);
  if (!bytes.has(0, sizeof(Elf64_Ehdr))) return malformed("file shorter than an ELF header");
  const auto header = bytes.at<Elf64_Ehdr>(0);
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return malformed("no ELF magic number");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) return malformed("not a 64-bit ELF file");
  if (header.e_ident[EI_DATA] != ELFDATA2LSB) return malformed("not little-endian");
  if (header.e_shentsize != sizeof(Elf64_Shdr)) return malformed("unexpected section header size");
  if (header.e_shnum == 0) return malformed("no section headers");
  if (!bytes.has(header.e_shoff, uint64_t{header.e_shnum} * sizeof(Elf64_Shdr))) {
    return malformed("section header table runs past the end of the file");
  }
  std::vector<Elf64_Shdr> sections;
  for (uint16_t i = 0; i < header.e_shnum; ++i) {
    sections.push_back(bytes.at<Elf64_Shdr>(header.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr)));
  }

  ElfSymbols out;
  for (const auto& section : sections) {
    if (section.sh_type != SHT_DYNSYM && section.sh_type != SHT_SYMTAB &&
        section.sh_type != SHT_DYNAMIC)
      continue;
    if (section.sh_type == SHT_NOBITS) continue;
    if (!bytes.has(section.sh_offset, section.sh_size))
      return malformed("a symbol section runs past the end");
    if (section.sh_link >= sections.size())
      return malformed("a symbol section links to no string table");
    const Elf64_Shdr& strings = sections[section.sh_link];
    if (!bytes.has(strings.sh_offset, strings.sh_size))
      return malformed("a string table runs past the end");

    if (section.sh_type == SHT_DYNAMIC) {
      for (uint64_t off = 0; off + sizeof(Elf64_Dyn) <= section.sh_size; off += sizeof(Elf64_Dyn)) {
        const auto entry = bytes.at<Elf64_Dyn>(section.sh_offset + off);
        if (entry.d_tag == DT_NULL) break;
        if (entry.d_tag == DT_NEEDED) {
          out.needed.push_back(
              bytes.string_at(strings.sh_offset, strings.sh_size, entry.d_un.d_val));
        }
      }
      continue;
    }
    for (uint64_t off = sizeof(Elf64_Sym); off + sizeof(Elf64_Sym) <= section.sh_size;
         off += sizeof(Elf64_Sym)) {
      const auto symbol = bytes.at<Elf64_Sym>(section.sh_offset + off);
      const unsigned type = ELF64_ST_TYPE(symbol.st_info);
      if (type == STT_SECTION || type == STT_FILE) continue;
      std::string name = bytes.string_at(strings.sh_offset, strings.sh_size, symbol.st_name);
      if (name.empty()) continue;
      out.symbols.push_back(
          {std::move(name), symbol.st_shndx != SHN_UNDEF, section.sh_type == SHT_DYNSYM});
    }
  }
  return out;
}

}  // namespace kiln::compiler
