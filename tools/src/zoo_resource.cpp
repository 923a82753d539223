// kiln://zoo/{id}/{file}: a zoo entry's kernel.cu, meta.json or NOTES.md, whole.
#include <algorithm>
#include <filesystem>

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
  // completion/complete: the zoo's entry ids, and the files the chosen entry has.
  resource.complete["id"] = [kb](const std::map<std::string, std::string>&) {
    return kb::list_zoo_ids(kb->paths().zoo_dir());
  };
  resource.complete["file"] = [kb](const std::map<std::string, std::string>& context) {
    auto id = context.find("id");
    if (id == context.end()) return kb::zoo_entry_files();
    auto ids = kb::list_zoo_ids(kb->paths().zoo_dir());  // only a real entry's folder is looked at
    if (std::find(ids.begin(), ids.end(), id->second) == ids.end())
      return std::vector<std::string>{};
    std::vector<std::string> present;
    for (const auto& file : kb::zoo_entry_files())
      if (std::filesystem::exists(kb->paths().zoo_dir() / id->second / file))
        present.push_back(file);
    return present;
  };
  return resource;
}

}  // namespace kiln::tools
