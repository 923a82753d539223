#include "kiln/mcp/resource_registry.h"

namespace kiln::mcp {

using json = nlohmann::json;

std::optional<TemplateVariables> match_uri_template(const std::string& uri_template,
                                                    const std::string& uri) {
  TemplateVariables variables;
  size_t t = 0;
  size_t u = 0;
  while (t < uri_template.size()) {
    if (uri_template[t] != '{') {
      if (u >= uri.size() || uri[u] != uri_template[t]) return std::nullopt;
      ++t;
      ++u;
      continue;
    }
    size_t close = uri_template.find('}', t);
    if (close == std::string::npos) return std::nullopt;
    std::string name = uri_template.substr(t + 1, close - t - 1);
    t = close + 1;
    // A variable runs to the next '/' (or the literal that follows it).
    char stop = t < uri_template.size() ? uri_template[t] : '\0';
    size_t end = u;
    while (end < uri.size() && uri[end] != '/' && (stop == '\0' || uri[end] != stop)) ++end;
    if (end == u) return std::nullopt;
    variables[name] = uri.substr(u, end - u);
    u = end;
  }
  if (u != uri.size()) return std::nullopt;
  return variables;
}

void ResourceRegistry::add(Resource resource) { resources_.push_back(std::move(resource)); }

void ResourceRegistry::add(ResourceTemplate resource_template) {
  templates_.push_back(std::move(resource_template));
}

json ResourceRegistry::list() const {
  json out = json::array();
  for (const auto& r : resources_) {
    out.push_back({{"uri", r.uri},
                   {"name", r.name},
                   {"title", r.title},
                   {"description", r.description},
                   {"mimeType", r.mime_type}});
  }
  return json{{"resources", std::move(out)}};
}

json ResourceRegistry::list_templates() const {
  json out = json::array();
  for (const auto& t : templates_) {
    out.push_back({{"uriTemplate", t.uri_template},
                   {"name", t.name},
                   {"title", t.title},
                   {"description", t.description},
                   {"mimeType", t.mime_type}});
  }
  return json{{"resourceTemplates", std::move(out)}};
}

bool ResourceRegistry::knows(const std::string& uri) const {
  for (const auto& r : resources_)
    if (r.uri == uri) return true;
  for (const auto& t : templates_)
    if (match_uri_template(t.uri_template, uri)) return true;
  return false;
}

Result<json> ResourceRegistry::read(const std::string& uri) const {
  auto contents = [&](Result<ResourceContents> read) -> Result<json> {
    if (!read) return read.error();
    return json{{"contents", json::array({{{"uri", uri},
                                           {"mimeType", read->mime_type},
                                           {read->binary ? "blob" : "text", read->text}}})}};
  };
  for (const auto& r : resources_)
    if (r.uri == uri) return contents(r.read());
  for (const auto& t : templates_)
    if (auto variables = match_uri_template(t.uri_template, uri))
      return contents(t.read(*variables));
  return make_error("unknown resource " + uri +
                    "; call resources/list and resources/templates/list");
}

Result<json> ResourceRegistry::complete(const std::string& uri_template, const std::string& name,
                                        const std::string& prefix,
                                        const std::map<std::string, std::string>& context) const {
  for (const auto& t : templates_) {
    if (t.uri_template != uri_template) continue;
    auto completer = t.complete.find(name);
    if (completer == t.complete.end()) return completion_result({}, prefix);
    return completion_result(completer->second(context), prefix);
  }
  return make_error("no resource template " + uri_template +
                    "; call resources/templates/list for the templates kiln offers");
}

}  // namespace kiln::mcp
