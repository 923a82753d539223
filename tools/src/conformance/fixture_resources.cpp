// The conformance suite's resources: test://static-text, test://static-binary,
// test://watched-resource (to subscribe to) and the template test://template/{id}/data
// (scenarios resources-*, caching).
#include "fixtures.h"

namespace kiln::tools::conformance {

using json = nlohmann::json;

void add_fixture_resources(mcp::ResourceRegistry& resources) {
  mcp::Resource text;
  text.uri = "test://static-text";
  text.name = "static_text";
  text.title = "Static text (conformance)";
  text.description = "Conformance-suite fixture: a fixed text resource.";
  text.mime_type = "text/plain";
  text.read = [] {
    return Result<mcp::ResourceContents>(
        mcp::ResourceContents{"text/plain", "This is the content of the static text resource."});
  };
  resources.add(std::move(text));

  mcp::Resource binary;
  binary.uri = "test://static-binary";
  binary.name = "static_binary";
  binary.title = "Static binary (conformance)";
  binary.description = "Conformance-suite fixture: a fixed PNG, sent as a blob.";
  binary.mime_type = "image/png";
  binary.read = [] {
    return Result<mcp::ResourceContents>(mcp::ResourceContents{"image/png", kPngBase64, true});
  };
  resources.add(std::move(binary));

  mcp::Resource watched;
  watched.uri = "test://watched-resource";
  watched.name = "watched_resource";
  watched.title = "Watched resource (conformance)";
  watched.description = "Conformance-suite fixture: a text resource to subscribe to.";
  watched.mime_type = "text/plain";
  watched.read = [] {
    return Result<mcp::ResourceContents>(
        mcp::ResourceContents{"text/plain", "This resource can be subscribed to."});
  };
  resources.add(std::move(watched));

  mcp::ResourceTemplate data;
  data.uri_template = "test://template/{id}/data";
  data.name = "template_data";
  data.title = "Data by id (conformance)";
  data.description = "Conformance-suite fixture: JSON that names the id in the URI.";
  data.mime_type = "application/json";
  data.read = [](const mcp::TemplateVariables& variables) -> Result<mcp::ResourceContents> {
    const std::string id = variables.at("id");
    json body{{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}};
    return mcp::ResourceContents{"application/json", body.dump()};
  };
  data.complete["id"] = [](const std::map<std::string, std::string>&) {
    return std::vector<std::string>{"123", "456", "789"};
  };
  resources.add(std::move(data));
}

}  // namespace kiln::tools::conformance
