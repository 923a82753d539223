// kiln://zoo/{id}/{file}: a zoo entry's kernel.cu, meta.json or NOTES.md, whole.
#include "kiln/kb/zoo_entry.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

mcp::ResourceTemplate make_zoo_resource_template(std::shared_ptr<kb::KbService> kb) {
  mcp::ResourceTemplate resource;
  resource.uri_template = "kiln://zoo/{id}/{file}";
  resource.name = "zoo_entry_file";
  resource.title = "Kernel zoo entry file";
  resource.description =
      "One file of a kernel zoo entry: kernel.cu, meta.json or NOTES.md (ids from search_zoo), "
      "whole.";
  resource.mime_type = "text/plain";
  resource.read = [kb](const mcp::TemplateVariables& variables) -> Result<mcp::ResourceContents> {
    const std::string id = variables.count("id") ? variables.at("id") : "";
    const std::string file = variables.count("file") ? variables.at("file") : "";
    auto text = kb::read_zoo_file(kb->paths().zoo_dir(), id, file);
    if (!text) return text.error();
    std::string mime = file == "meta.json"  ? "application/json"
                       : file == "NOTES.md" ? "text/markdown"
                                            : "text/x-cuda";
    return mcp::ResourceContents{mime, std::move(*text)};
  };
  return resource;
}

}  // namespace kiln::tools
