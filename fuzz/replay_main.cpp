// The replay driver of the normal build: feeds every file under the directories (or the files)
// named on the command line to LLVMFuzzerTestOneInput, once each, in name order. A crash, an
// uncaught exception or a failed check in the target ends the program abnormally, so the ctest
// that runs a seed corpus fails on it; the file being run is printed first, to name the culprit.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> inputs(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(root)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
      if (entry.is_regular_file()) files.push_back(entry.path());
  } else if (std::filesystem::is_regular_file(root)) {
    files.push_back(root);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_bytes(const std::filesystem::path& file) {
  std::string bytes;
  if (std::FILE* in = std::fopen(file.c_str(), "rb")) {
    char buffer[1 << 16];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) bytes.append(buffer, n);
    std::fclose(in);
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    const auto files = inputs(argv[i]);
    if (files.empty()) {
      std::fprintf(stderr, "kiln fuzz replay: %s holds no input files\n", argv[i]);
      return 2;
    }
    for (const auto& file : files) {
      const std::string bytes = read_bytes(file);
      std::fprintf(stderr, "running %s (%zu bytes)\n", file.c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++ran;
    }
  }
  std::fprintf(stderr, "kiln fuzz replay: %zu inputs ran without a crash\n", ran);
  return 0;
}
