// kiln://frontier: the run's frontier as a resource (the same JSON as list_frontier).
#include "frontier_view.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

mcp::Resource make_frontier_resource(std::shared_ptr<FrontierSource> frontier) {
  mcp::Resource resource;
  resource.uri = "kiln://frontier";
  resource.name = "frontier";
  resource.title = "The run's frontier";
  resource.description =
      "The frontier and the 10 newest results of this run (the same JSON as list_frontier).";
  resource.mime_type = "application/json";
  resource.read = [frontier]() -> Result<mcp::ResourceContents> {
    auto listing = frontier_listing(*frontier, 10, 0, kFrontierListingBytes);
    if (!listing) return listing.error();
    return mcp::ResourceContents{"application/json", listing->dump(2)};
  };
  return resource;
}

}  // namespace kiln::tools
