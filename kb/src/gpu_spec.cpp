#include "kiln/kb/gpu_spec.h"

#include <algorithm>
#include <cctype>

#include "kiln/base/file.h"
#include "kiln/kb/kb_paths.h"

namespace kiln::kb {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string normalize(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (out.rfind("nvidia", 0) == 0) out.erase(0, 6);
  return out;
}

// A sourced value: {"value": 132, "source": "datasheet"}, where the source is a key of
// the document's "sources".
Result<double> sourced(const json& document, const json& group, const std::string& key,
                       const std::string& where) {
  auto it = group.find(key);
  if (it == group.end() || !it->is_object() || !it->contains("value") ||
      !(*it)["value"].is_number())
    return make_error(where + ": `" + key + "` needs {\"value\": number, \"source\": ...}");
  std::string source = it->value("source", "");
  if (source.empty() || !document.contains("sources") || !document["sources"].contains(source))
    return make_error(where + ": `" + key + "` must name a source listed under \"sources\" (got `" +
                      source + "`)");
  return (*it)["value"].get<double>();
}

}  // namespace

double GpuSpec::peak_tflops(const std::string& dtype) const {
  std::string d = normalize(dtype);
  auto tensor = [&](const char* key) {
    auto it = tensor_dense_tflops.find(key);
    return it == tensor_dense_tflops.end() ? 0.0 : it->second;
  };
  if (d == "f16" || d == "fp16" || d == "half") return tensor("fp16");
  if (d == "bf16") return tensor("bf16");
  if (d == "e4m3" || d == "e5m2" || d == "fp8" || d == "f8") return tensor("fp8");
  if (d == "tf32") return tensor("tf32");
  if (d == "f32" || d == "fp32" || d == "float") return fp32_tflops;
  if (d == "f64" || d == "fp64" || d == "double") return tensor("fp64");
  return 0;
}

Result<GpuSpec> parse_gpu_spec(const json& document, const std::string& id) {
  const std::string where = "kb/hw/" + id + ".json";
  if (!document.is_object() || !document.contains("specs") || !document["specs"].is_object() ||
      !document.contains("tensor_dense_tflops") || !document.contains("sources"))
    return make_error(where + ": needs objects \"sources\", \"specs\" and \"tensor_dense_tflops\"");
  GpuSpec spec;
  spec.id = id;
  spec.name = document.value("name", id);
  spec.arch = document.value("arch", "");
  spec.compute_capability = document.value("compute_capability", "");
  spec.document = document;
  const json& specs = document["specs"];
  struct Field {
    const char* key;
    double* value;
  };
  double sms = 0, regs_thread = 0, threads = 0;
  double smem_sm = 0, smem_block = 0, regs_sm = 0, l2 = 0, hbm = 0;
  const Field fields[] = {{"sms", &sms},
                          {"boost_clock_mhz", &spec.boost_clock_mhz},
                          {"smem_per_sm_bytes", &smem_sm},
                          {"smem_per_block_max_bytes", &smem_block},
                          {"registers_per_sm", &regs_sm},
                          {"registers_per_thread_max", &regs_thread},
                          {"max_threads_per_sm", &threads},
                          {"l2_bytes", &l2},
                          {"hbm_bytes", &hbm},
                          {"hbm_bandwidth_gbps", &spec.hbm_bandwidth_gbps},
                          {"fp32_tflops", &spec.fp32_tflops},
                          {"fp64_tflops", &spec.fp64_tflops}};
  for (const auto& field : fields) {
    auto value = sourced(document, specs, field.key, where);
    if (!value) return value.error();
    *field.value = *value;
  }
  spec.sms = static_cast<int>(sms);
  spec.registers_per_thread_max = static_cast<int>(regs_thread);
  spec.max_threads_per_sm = static_cast<int>(threads);
  spec.smem_per_sm_bytes = static_cast<int64_t>(smem_sm);
  spec.smem_per_block_max_bytes = static_cast<int64_t>(smem_block);
  spec.registers_per_sm = static_cast<int64_t>(regs_sm);
  spec.l2_bytes = static_cast<int64_t>(l2);
  spec.hbm_bytes = static_cast<int64_t>(hbm);
  if (specs.contains("max_blocks_per_sm")) {  // optional: older files lack it
    auto blocks = sourced(document, specs, "max_blocks_per_sm", where);
    if (!blocks) return blocks.error();
    spec.max_blocks_per_sm = static_cast<int>(*blocks);
  }
  const json& tensor = document["tensor_dense_tflops"];
  for (const char* key : {"fp16", "bf16", "fp8", "tf32", "fp64"}) {
    auto value = sourced(document, tensor, key, where);
    if (!value) return value.error();
    spec.tensor_dense_tflops[key] = *value;
  }
  return spec;
}

std::vector<std::string> list_gpu_specs(const fs::path& hw_dir) {
  std::vector<std::string> ids;
  std::error_code error;
  for (fs::directory_iterator it(hw_dir, error), end; !error && it != end; it.increment(error)) {
    if (it->path().extension() == ".json") ids.push_back(it->path().stem().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<GpuSpec> load_gpu_spec(const fs::path& hw_dir, const std::string& name) {
  const std::string wanted = normalize(name);
  std::vector<std::string> ids = list_gpu_specs(hw_dir);
  for (const auto& id : ids) {
    auto text = read_file(hw_dir / (id + ".json"));
    if (!text) continue;
    json document = json::parse(*text, nullptr, false);
    if (document.is_discarded())
      return make_error("kb/hw/" + id + ".json is not valid JSON; fix it");
    bool match = normalize(id) == wanted || normalize(document.value("name", "")) == wanted;
    for (const auto& alias : document.value("aliases", json::array()))
      if (alias.is_string() && normalize(alias.get<std::string>()) == wanted) match = true;
    if (match) return parse_gpu_spec(document, id);
  }
  std::string known;
  for (const auto& id : ids) known += (known.empty() ? "" : ", ") + id;
  return make_error("no GPU spec for `" + name + "` in " + hw_dir.string() +
                    "; known: " + (known.empty() ? "none" : known));
}

Result<GpuSpec> load_gpu_spec(const std::string& name) {
  return load_gpu_spec(default_kb_dir() / "hw", name);
}

}  // namespace kiln::kb
