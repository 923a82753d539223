// kiln://ptx/{section}: a PTX note (by id), one of its sections ("note:slug"), or a
// section of an ingested PTX ISA document ("isa:9.7.13.15.16"), whole.
#include "kiln/kb/closest_names.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

mcp::ResourceTemplate make_ptx_resource_template(std::shared_ptr<kb::KbService> kb) {
  mcp::ResourceTemplate resource;
  resource.uri_template = "kiln://ptx/{section}";
  resource.name = "ptx_section";
  resource.title = "PTX note or section";
  resource.description =
      "A kiln PTX note (e.g. kiln://ptx/mbarrier), one of its sections "
      "(kiln://ptx/mbarrier:pitfalls) or a section "
      "of an ingested PTX ISA document; ids come from read_ptx_spec.";
  resource.mime_type = "text/markdown";
  resource.read = [kb](const mcp::TemplateVariables& variables) -> Result<mcp::ResourceContents> {
    const std::string id = variables.count("section") ? variables.at("section") : "";
    auto index = kb->index();
    if (!index) return index.error();
    auto section = (*index)->read_section(id);
    if (!section) {
      auto close = kb::closest_names(id, (*index)->section_ids(), 6);
      std::string hint;
      for (size_t i = 0; i < close.size(); ++i) hint += (i ? ", " : "; close ids: ") + close[i];
      return make_error("no PTX note or section `" + id + "`" + hint);
    }
    return mcp::ResourceContents{section->kind == "document" ? "text/plain" : "text/markdown",
                                 section->text};
  };
  // completion/complete: the note and section ids of the index (none while it is unusable).
  resource.complete["section"] = [kb](const std::map<std::string, std::string>&) {
    auto index = kb->index();
    return index ? (*index)->section_ids() : std::vector<std::string>{};
  };
  return resource;
}

}  // namespace kiln::tools
