// kiln kb build | ingest-ptx FILE | read URI: the knowledge-base index and its resources.
#include <iostream>

#include "commands.h"
#include "kiln/kb/kb_service.h"
#include "kiln/kb/ptx_document.h"
#include "kiln/kb/ptx_note.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::cli {

namespace {

struct KbOptions {
  std::string kb_dir;     // empty: KILN_KB_DIR, then the source tree, then <prefix>/share/kiln/kb
  std::string cache_dir;  // empty: KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln
  std::string cccl_dir;   // empty: KILN_CCCL_PTX_DIR, then the CUDA toolkit's CCCL headers
  std::string file;       // ingest-ptx
  std::string name = "isa";
  std::string uri;  // read
};

void print_warnings(const kb::BuildReport& report) {
  const size_t shown = std::min<size_t>(report.warnings.size(), 20);
  for (size_t i = 0; i < shown; ++i) std::cerr << "warning: " << report.warnings[i] << "\n";
  if (report.warnings.size() > shown)
    std::cerr << "(" << report.warnings.size() - shown << " more warnings)\n";
}

int build(const KbOptions& options) {
  kb::KbService service(kb::resolve_paths(options.kb_dir, options.cache_dir, options.cccl_dir));
  auto report = service.rebuild();
  if (!report) {
    std::cerr << "kiln: " << report.error().message << "\n";
    return 1;
  }
  std::cout << report->summary();
  print_warnings(*report);
  return 0;
}

int ingest(const KbOptions& options) {
  kb::KbService service(kb::resolve_paths(options.kb_dir, options.cache_dir, options.cccl_dir));
  auto sections = kb::store_ptx_document(service.paths(), options.file, options.name);
  if (!sections) {
    std::cerr << "kiln: " << sections.error().message << "\n";
    return 1;
  }
  std::cout << "stored " << options.file << " as `" << kb::slugify(options.name) << "` ("
            << *sections << " sections) in " << service.paths().documents_dir().string() << "\n";
  auto report = service.rebuild();
  if (!report) {
    std::cerr << "kiln: " << report.error().message << "\n";
    return 1;
  }
  std::cout << report->summary();
  print_warnings(*report);
  std::cout << "read its sections with read_ptx_spec {\"section\": \"" << kb::slugify(options.name)
            << ":...\"}\n";
  return 0;
}

int read(const KbOptions& options) {
  auto service = std::make_shared<kb::KbService>(
      kb::resolve_paths(options.kb_dir, options.cache_dir, options.cccl_dir));
  mcp::ResourceRegistry resources;
  resources.add(tools::make_zoo_resource_template(service));
  resources.add(tools::make_ptx_resource_template(service));
  auto contents = resources.read(options.uri);
  if (!contents) {
    std::cerr << "kiln: " << contents.error().message << "\n";
    return 1;
  }
  std::string text = (*contents)["contents"][0].value("text", "");
  std::cout << text << (text.empty() || text.back() != '\n' ? "\n" : "");
  return 0;
}

}  // namespace

Runner add_kb_command(CLI::App& app, const GlobalOptions&) {
  auto options = std::make_shared<KbOptions>();
  auto* command = app.add_subcommand(
      "kb", "The knowledge base: zoo, PTX notes and CCCL PTX forms, indexed in SQLite FTS5");
  command->require_subcommand(1);
  command->add_option("--kb-dir", options->kb_dir,
                      "kb folder (default: KILN_KB_DIR, then the bundled kb/)");
  command->add_option(
      "--cache-dir", options->cache_dir,
      "where the index lives (default: KILN_CACHE_DIR, $XDG_CACHE_HOME/kiln, ~/.cache/kiln)");
  command->add_option(
      "--cccl-dir", options->cccl_dir,
      "CCCL generated PTX headers (default: KILN_CCCL_PTX_DIR, then the CUDA toolkit's)");
  auto* build_command =
      command->add_subcommand("build", "Build or rebuild the index; print counts and time");
  auto* ingest_command = command->add_subcommand(
      "ingest-ptx", "Add a PTX ISA document (HTML or Markdown) to the index, split at headings");
  ingest_command->add_option("file", options->file, "the document")
      ->required()
      ->check(CLI::ExistingFile);
  ingest_command->add_option("--name", options->name,
                             "prefix of its section ids (default: isa -> isa:9.7.13)");
  auto* read_command = command->add_subcommand(
      "read", "Print a kb resource: kiln://zoo/ID/FILE or kiln://ptx/SECTION");
  read_command->add_option("uri", options->uri, "resource URI")->required();
  return [options, build_command, ingest_command, read_command]() -> int {
    if (build_command->parsed()) return build(*options);
    if (ingest_command->parsed()) return ingest(*options);
    if (read_command->parsed()) return read(*options);
    return 2;
  };
}

}  // namespace kiln::cli
