// Read-only resources: fixed URIs and URI templates (RFC 6570 level 1, {var}).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/completion.h"
#include "kiln/mcp/resource_changes.h"

namespace kiln::mcp {

struct ResourceContents {
  std::string mime_type;
  std::string text;     // the text, or with `binary` the bytes in base64
  bool binary = false;  // sent as "blob" rather than "text"
};

struct Resource {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  std::function<Result<ResourceContents>()> read;
};

using TemplateVariables = std::map<std::string, std::string>;

struct ResourceTemplate {
  std::string uri_template;  // e.g. kiln://zoo/{id}/{file}
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  std::function<Result<ResourceContents>(const TemplateVariables&)> read;
  // completion/complete for a variable, by its name; variables without one complete to nothing.
  std::map<std::string, Completer> complete = {};
};

// Matches `uri` against a template of literal text and {name} variables; a
// variable matches one or more characters other than '/'.
std::optional<TemplateVariables> match_uri_template(const std::string& uri_template,
                                                    const std::string& uri);

class ResourceRegistry {
 public:
  void add(Resource resource);
  void add(ResourceTemplate resource_template);

  nlohmann::json list() const;            // resources/list
  nlohmann::json list_templates() const;  // resources/templates/list

  // resources/read: the contents, or an error saying the URI is unknown or why it could not be
  // read.
  Result<nlohmann::json> read(const std::string& uri) const;
  bool knows(const std::string& uri) const;

  // completion/complete for variable `name` of the template `uri_template`; an
  // error when no template has that URI.
  Result<nlohmann::json> complete(const std::string& uri_template, const std::string& name,
                                  const std::string& prefix,
                                  const std::map<std::string, std::string>& context) const;

  // Where a change of a resource is announced, and sessions listen (resource_changes.h).
  ResourceChanges& changes() const { return *changes_; }

 private:
  std::vector<Resource> resources_;
  std::vector<ResourceTemplate> templates_;
  std::shared_ptr<ResourceChanges> changes_ = std::make_shared<ResourceChanges>();
};

}  // namespace kiln::mcp
