#include "zoo_meta.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <regex>
#include <sstream>

#include "dim_expression.h"
#include "kiln/zoo/numeric.h"
#include "kiln/zoo/op_signature.h"

namespace kiln::zoo {
namespace {

using Json = nlohmann::ordered_json;

std::string read_text(const std::filesystem::path& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool is_blank(const std::string& text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

std::string without_spaces(std::string text) {
  text.erase(std::remove_if(text.begin(), text.end(),
                            [](unsigned char c) { return std::isspace(c) != 0; }),
             text.end());
  return text;
}

// Collects problems with a common prefix ("meta.json: test.shapes[1].M: ...").
class Problems {
 public:
  explicit Problems(std::vector<std::string>& out) : out_(out) {}
  void add(const std::string& where, const std::string& what) {
    out_.push_back("meta.json: " + where + ": " + what);
  }
  size_t count() const { return out_.size(); }

 private:
  std::vector<std::string>& out_;
};

bool non_empty_string(const Json& object, const char* key) {
  return object.contains(key) && object[key].is_string() &&
         !is_blank(object[key].get<std::string>());
}

std::optional<std::string> string_field(const Json& object, const char* key, Problems& problems,
                                        const std::string& where) {
  if (!non_empty_string(object, key)) {
    problems.add(where + key, "missing or not a non-empty string");
    return std::nullopt;
  }
  return object[key].get<std::string>();
}

std::vector<std::string> string_array(const Json& object, const char* key, Problems& problems,
                                      const std::string& where, bool non_empty) {
  std::vector<std::string> out;
  if (!object.contains(key) || !object[key].is_array()) {
    problems.add(where + key, "missing or not an array of strings");
    return out;
  }
  for (size_t i = 0; i < object[key].size(); ++i) {
    const Json& item = object[key][i];
    if (!item.is_string() || item.get<std::string>().empty()) {
      problems.add(where + key + "[" + std::to_string(i) + "]", "not a non-empty string");
    } else {
      out.push_back(item.get<std::string>());
    }
  }
  if (non_empty && object[key].empty()) problems.add(where + key, "is empty; list at least one");
  return out;
}

std::optional<TensorDecl> parse_tensor(const Json& item, const std::string& where,
                                       Problems& problems) {
  if (!item.is_object()) {
    problems.add(where, "not an object {\"name\", \"dtype\", \"shape\"}");
    return std::nullopt;
  }
  TensorDecl tensor;
  const size_t before = problems.count();
  if (auto name = string_field(item, "name", problems, where + ".")) tensor.name = *name;
  if (auto dtype = string_field(item, "dtype", problems, where + ".")) {
    if (auto parsed = parse_dtype(*dtype)) {
      tensor.dtype = *parsed;
    } else {
      problems.add(where + ".dtype",
                   "'" + *dtype + "' is not a dtype (f16 bf16 f32 f64 e4m3 e5m2 i8 u8 i32 i64)");
    }
  }
  if (!item.contains("shape") || !item["shape"].is_array() || item["shape"].empty() ||
      item["shape"].size() > KILN_MAX_RANK) {
    problems.add(where + ".shape", "missing or not an array of 1 to 8 dim expressions");
  } else {
    for (const Json& extent : item["shape"]) {
      if (extent.is_string()) {
        tensor.shape.push_back(without_spaces(extent.get<std::string>()));
      } else if (extent.is_number_integer()) {
        tensor.shape.push_back(std::to_string(extent.get<int64_t>()));
      } else {
        problems.add(where + ".shape",
                     "holds " + extent.dump() + "; write a dim expression or an integer");
      }
    }
  }
  if (problems.count() != before) return std::nullopt;
  return tensor;
}

std::optional<ScalarDecl> parse_scalar(const Json& item, const std::string& where,
                                       Problems& problems) {
  if (!item.is_object()) {
    problems.add(where, "not an object {\"name\", \"dtype\", \"value\"}");
    return std::nullopt;
  }
  ScalarDecl scalar;
  const size_t before = problems.count();
  if (auto name = string_field(item, "name", problems, where + ".")) scalar.name = *name;
  const Json dtype = item.value("dtype", Json());
  const Json value = item.value("value", Json());
  if (dtype == "i64") {
    scalar.dtype = KILN_I64;
    if (!value.is_number_integer()) {
      problems.add(where + ".value", "must be an integer for dtype i64");
    } else {
      scalar.i = value.get<int64_t>();
    }
  } else if (dtype == "f64") {
    scalar.dtype = KILN_F64;
    if (!value.is_number()) {
      problems.add(where + ".value", "must be a number for dtype f64");
    } else {
      scalar.f = value.get<double>();
    }
  } else {
    problems.add(where + ".dtype", "must be \"i64\" or \"f64\"");
  }
  if (problems.count() != before) return std::nullopt;
  return scalar;
}

std::string dtype_list(const std::vector<kiln_dtype>& dtypes) {
  std::string out;
  for (const kiln_dtype d : dtypes) out += (out.empty() ? "" : " or ") + std::string(dtype_name(d));
  return out;
}

std::string shape_text(const std::vector<std::string>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + shape[i];
  return out + "]";
}

// The entry's tensors against the README's op table.
void check_tensors_against_table(const std::vector<TensorDecl>& declared,
                                 const std::vector<OpTensor>& expected, const std::string& where,
                                 const std::string& op, Problems& problems,
                                 std::map<std::string, kiln_dtype>& dtypes_seen) {
  if (declared.size() != expected.size()) {
    std::string names;
    for (const auto& t : expected) names += (names.empty() ? "" : ", ") + t.name;
    problems.add(where, "has " + std::to_string(declared.size()) + " tensors; op " + op +
                            " takes " + std::to_string(expected.size()) + " (" + names + ")");
    return;
  }
  for (size_t i = 0; i < declared.size(); ++i) {
    const TensorDecl& t = declared[i];
    const OpTensor& e = expected[i];
    const std::string at = where + "[" + std::to_string(i) + "]";
    if (t.name != e.name)
      problems.add(at + ".name", "is '" + t.name + "'; op " + op + " names it '" + e.name + "'");
    if (std::find(e.dtypes.begin(), e.dtypes.end(), t.dtype) == e.dtypes.end()) {
      problems.add(at + ".dtype", "is " + std::string(dtype_name(t.dtype)) + "; op " + op +
                                      " allows " + dtype_list(e.dtypes) + " for " + e.name);
    }
    if (!e.same_dtype_as.empty()) {
      const auto it = dtypes_seen.find(e.same_dtype_as);
      if (it != dtypes_seen.end() && it->second != t.dtype) {
        problems.add(at + ".dtype", "is " + std::string(dtype_name(t.dtype)) + " but must equal " +
                                        e.same_dtype_as + "'s dtype (" +
                                        std::string(dtype_name(it->second)) + ")");
      }
    }
    dtypes_seen[e.name] = t.dtype;
    if (t.shape != e.shape) {
      problems.add(at + ".shape",
                   "is " + shape_text(t.shape) + "; op " + op + " requires " + shape_text(e.shape));
    }
  }
}

}  // namespace

std::set<std::string> load_techniques(const std::filesystem::path& zoo_dir,
                                      std::vector<std::string>& problems) {
  std::set<std::string> out;
  bool ok = false;
  const std::string text = read_text(zoo_dir / "techniques.json", ok);
  if (!ok) {
    problems.push_back((zoo_dir / "techniques.json").string() + ": cannot be read");
    return out;
  }
  const Json json = Json::parse(text, nullptr, false);
  if (!json.is_object()) {
    problems.push_back((zoo_dir / "techniques.json").string() +
                       ": not a JSON object of term -> definition");
    return out;
  }
  for (const auto& [term, definition] : json.items()) out.insert(term);
  return out;
}

std::vector<std::filesystem::path> find_zoo_entries(const std::filesystem::path& zoo_dir) {
  std::vector<std::filesystem::path> out;
  std::error_code error;
  for (const auto& item : std::filesystem::directory_iterator(zoo_dir, error)) {
    if (!item.is_directory()) continue;
    const auto& dir = item.path();
    if (std::filesystem::exists(dir / "meta.json") || std::filesystem::exists(dir / "kernel.cu")) {
      out.push_back(dir);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

ShapeResult evaluate_shapes(const ZooMeta& meta, const Dims& dims) {
  ShapeResult result;
  auto evaluate_all = [&](const std::vector<TensorDecl>& tensors) {
    for (const TensorDecl& t : tensors) {
      std::vector<int64_t> shape;
      for (const std::string& extent : t.shape) {
        auto value = evaluate_dim_expression(extent, dims);
        if (!value) {
          result.error = t.name + " extent '" + extent + "': " + value.error().message;
          return false;
        }
        if (*value < 0) {
          result.error =
              t.name + " extent '" + extent + "' is " + std::to_string(*value) + " (negative)";
          return false;
        }
        shape.push_back(*value);
      }
      result.shapes.push_back(std::move(shape));
    }
    return true;
  };
  if (evaluate_all(meta.inputs)) evaluate_all(meta.outputs);
  return result;
}

std::string format_dims(const Dims& dims) {
  std::string out = "{";
  for (const auto& [name, value] : dims) {
    out += (out.size() > 1 ? ", " : "") + name + ": " + std::to_string(value);
  }
  return out + "}";
}

std::string format_shape(const Json& shape) {
  std::string out = "{";
  for (const auto& [name, value] : shape.items()) {
    out += (out.size() > 1 ? ", " : "") + name + ": " + value.dump();
  }
  return out + "}";
}

MetaCheck check_zoo_entry(const std::filesystem::path& entry_dir,
                          const std::set<std::string>& techniques,
                          const std::set<std::string>& entry_ids) {
  MetaCheck check;
  Problems problems(check.problems);
  const std::string folder = entry_dir.filename().string();

  bool ok = false;
  const std::string notes = read_text(entry_dir / "NOTES.md", ok);
  if (!ok) {
    check.problems.push_back("NOTES.md: missing; write what the entry teaches");
  } else if (is_blank(notes)) {
    check.problems.push_back("NOTES.md: empty; write what the entry teaches");
  }
  const std::string kernel = read_text(entry_dir / "kernel.cu", ok);
  if (!ok) {
    check.problems.push_back("kernel.cu: missing");
  } else if (kernel.find("kiln_launch") == std::string::npos) {
    check.problems.push_back("kernel.cu: does not define kiln_launch (the ABI entry point)");
  }

  const std::string text = read_text(entry_dir / "meta.json", ok);
  if (!ok) {
    check.problems.push_back("meta.json: missing");
    return check;
  }
  Json json;
  try {
    json = Json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    check.problems.push_back(std::string("meta.json: not valid JSON: ") + error.what());
    return check;
  }
  if (!json.is_object()) {
    check.problems.push_back("meta.json: not a JSON object");
    return check;
  }

  ZooMeta meta;
  meta.dir = entry_dir;
  static const std::set<std::string> kKnownKeys = {"id",   "title",   "op",          "techniques",
                                                   "arch", "dtypes",  "description", "related",
                                                   "test", "measured"};
  for (const auto& [key, value] : json.items()) {
    if (kKnownKeys.count(key) == 0)
      check.warnings.push_back("meta.json: unknown field '" + key + "' (ignored)");
  }
  if (auto id = string_field(json, "id", problems, "")) {
    meta.id = *id;
    if (meta.id != folder)
      problems.add("id",
                   "is '" + meta.id + "' but the folder is '" + folder + "'; they must match");
    if (!std::regex_match(meta.id, std::regex("[a-z0-9_]+")))
      problems.add("id", "must match [a-z0-9_]+");
  }
  if (auto title = string_field(json, "title", problems, "")) meta.title = *title;
  (void)string_field(json, "description", problems, "");
  const OpSignature* op = nullptr;
  if (auto name = string_field(json, "op", problems, "")) {
    meta.op = *name;
    op = find_op_signature(meta.op);
    if (op == nullptr) {
      std::string ops;
      for (const auto& s : op_signatures()) ops += (ops.empty() ? "" : " ") + s.op;
      problems.add("op", "'" + meta.op + "' is not an op of the README table (" + ops + ")");
    }
  }
  meta.techniques = string_array(json, "techniques", problems, "", true);
  std::set<std::string> seen_techniques;
  for (const auto& t : meta.techniques) {
    if (techniques.count(t) == 0)
      problems.add(
          "techniques",
          "'" + t + "' is not in kb/zoo/techniques.json; use a defined term or add it there");
    if (!seen_techniques.insert(t).second)
      problems.add("techniques", "'" + t + "' is listed twice");
  }
  if (auto arch = string_field(json, "arch", problems, "")) {
    meta.arch = *arch;
    if (meta.arch != "sm_80" && meta.arch != "sm_90a")
      problems.add("arch", "is '" + meta.arch + "'; must be \"sm_80\" or \"sm_90a\"");
  }
  meta.dtypes = string_array(json, "dtypes", problems, "", true);
  for (const auto& d : meta.dtypes) {
    if (!parse_dtype(d)) problems.add("dtypes", "'" + d + "' is not a dtype");
  }
  if (json.contains("related")) {
    for (const auto& r : string_array(json, "related", problems, "", false)) {
      if (entry_ids.count(r) == 0)
        check.warnings.push_back("meta.json: related: no zoo entry '" + r + "' (yet)");
    }
  }
  if (!json.contains("measured") || !json["measured"].is_array()) {
    problems.add("measured", "missing or not an array (write [] until measured on an H200)");
  } else {
    meta.measured = json["measured"];
    for (size_t i = 0; i < meta.measured.size(); ++i) {
      const Json& m = meta.measured[i];
      const std::string at = "measured[" + std::to_string(i) + "]";
      if (!m.is_object()) {
        problems.add(at, "not an object");
        continue;
      }
      if (!non_empty_string(m, "gpu")) problems.add(at + ".gpu", "missing or not a string");
      if (!m.contains("date") || !m["date"].is_string() ||
          !std::regex_match(m["date"].get<std::string>(), std::regex("\\d{4}-\\d{2}-\\d{2}"))) {
        problems.add(at + ".date", "missing or not YYYY-MM-DD");
      }
      if (!m.contains("shape") || !m["shape"].is_object())
        problems.add(at + ".shape", "missing or not an object of dims");
      if (!m.contains("time_us") || !m["time_us"].is_number() || m["time_us"].get<double>() <= 0) {
        problems.add(at + ".time_us", "missing or not a positive number");
      }
    }
  }

  // test
  if (!json.contains("test") || !json["test"].is_object()) {
    problems.add("test", "missing or not an object");
    check.meta = std::move(meta);
    return check;
  }
  const Json& test = json["test"];
  static const std::set<std::string> kKnownTestKeys = {"signature",
                                                       "shapes",
                                                       "tolerance",
                                                       "input_range",
                                                       "flops",
                                                       "bytes",
                                                       "group_sizes_multiple_of"};
  for (const auto& [key, value] : test.items()) {
    if (kKnownTestKeys.count(key) == 0)
      check.warnings.push_back("meta.json: test: unknown field '" + key + "' (ignored)");
  }
  bool signature_ok = false;
  if (!test.contains("signature") || !test["signature"].is_object()) {
    problems.add("test.signature", "missing or not an object {inputs, outputs, scalars}");
  } else {
    const Json& signature = test["signature"];
    const size_t before = problems.count();
    for (const char* part : {"inputs", "outputs"}) {
      if (!signature.contains(part) || !signature[part].is_array()) {
        problems.add(std::string("test.signature.") + part, "missing or not an array");
        continue;
      }
      auto& list = std::string(part) == "inputs" ? meta.inputs : meta.outputs;
      for (size_t i = 0; i < signature[part].size(); ++i) {
        const std::string at =
            std::string("test.signature.") + part + "[" + std::to_string(i) + "]";
        if (auto t = parse_tensor(signature[part][i], at, problems)) list.push_back(*t);
      }
    }
    if (signature.contains("scalars") && !signature["scalars"].is_array()) {
      problems.add("test.signature.scalars", "not an array");
    } else if (signature.contains("scalars")) {
      for (size_t i = 0; i < signature["scalars"].size(); ++i) {
        const std::string at = "test.signature.scalars[" + std::to_string(i) + "]";
        if (auto s = parse_scalar(signature["scalars"][i], at, problems))
          meta.scalars.push_back(*s);
      }
    }
    if (problems.count() == before && op != nullptr) {
      std::map<std::string, kiln_dtype> dtypes_seen;
      check_tensors_against_table(meta.inputs, op->inputs, "test.signature.inputs", meta.op,
                                  problems, dtypes_seen);
      check_tensors_against_table(meta.outputs, op->outputs, "test.signature.outputs", meta.op,
                                  problems, dtypes_seen);
      if (meta.scalars.size() != op->scalars.size()) {
        problems.add("test.signature.scalars", "has " + std::to_string(meta.scalars.size()) +
                                                   " scalars; op " + meta.op + " takes " +
                                                   std::to_string(op->scalars.size()));
      } else {
        for (size_t i = 0; i < meta.scalars.size(); ++i) {
          const std::string at = "test.signature.scalars[" + std::to_string(i) + "]";
          if (meta.scalars[i].name != op->scalars[i].name)
            problems.add(at + ".name", "is '" + meta.scalars[i].name + "'; op " + meta.op +
                                           " names it '" + op->scalars[i].name + "'");
          if (meta.scalars[i].dtype != op->scalars[i].dtype)
            problems.add(at + ".dtype", "must be " + std::string(dtype_name(op->scalars[i].dtype)));
          if (meta.scalars[i].name == "causal" && meta.scalars[i].i != 0 && meta.scalars[i].i != 1)
            problems.add(at + ".value", "causal must be 0 or 1");
        }
      }
      signature_ok = problems.count() == before;
    }
  }
  if (!test.contains("tolerance") || !test["tolerance"].is_object()) {
    problems.add("test.tolerance", "missing or not an object {atol, rtol}");
  } else {
    for (const char* key : {"atol", "rtol"}) {
      const Json& v = test["tolerance"].value(key, Json());
      if (!v.is_number() || v.get<double>() < 0) {
        problems.add(std::string("test.tolerance.") + key, "missing or not a non-negative number");
      } else {
        (std::string(key) == "atol" ? meta.atol : meta.rtol) = v.get<double>();
      }
    }
    const Json outputs = test["tolerance"].value("outputs", Json::object());
    if (!outputs.is_object()) {
      problems.add("test.tolerance.outputs", "not an object {\"NAME\": {atol, rtol}}");
    } else {
      for (const auto& [name, value] : outputs.items()) {
        const std::string at = "test.tolerance.outputs." + name;
        const bool is_output =
            std::any_of(meta.outputs.begin(), meta.outputs.end(),
                        [&name = name](const TensorDecl& t) { return t.name == name; });
        if (!is_output) problems.add(at, "names no output of test.signature");
        Tolerance tolerance;
        for (const char* key : {"atol", "rtol"}) {
          const Json v = value.is_object() ? value.value(key, Json()) : Json();
          if (!v.is_number() || v.get<double>() < 0) {
            problems.add(at + "." + key, "missing or not a non-negative number");
          } else {
            (std::string(key) == "atol" ? tolerance.atol : tolerance.rtol) = v.get<double>();
          }
        }
        meta.output_tolerance[name] = tolerance;
      }
    }
  }
  const Json range = test.value("input_range", Json());
  if (!range.is_array() || range.size() != 2 || !range[0].is_number() || !range[1].is_number() ||
      range[0].get<double>() >= range[1].get<double>()) {
    problems.add("test.input_range", "missing or not [low, high] with low < high");
  } else {
    meta.range_low = range[0].get<double>();
    meta.range_high = range[1].get<double>();
  }
  for (const char* key : {"flops", "bytes"}) {
    if (!test.contains(key) || test[key].is_null()) continue;
    if (!test[key].is_string() || is_blank(test[key].get<std::string>())) {
      problems.add(std::string("test.") + key, "not an expression string such as \"2*M*N*K\"");
    } else {
      (std::string(key) == "flops" ? meta.flops : meta.bytes) = test[key].get<std::string>();
    }
  }
  if (meta.flops.empty() && meta.bytes.empty()) {
    check.warnings.push_back(
        "meta.json: test: neither flops nor bytes; the timing reports no TFLOP/s or GB/s");
  }
  if (test.contains("group_sizes_multiple_of")) {
    const Json& v = test["group_sizes_multiple_of"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1) {
      problems.add("test.group_sizes_multiple_of", "must be a positive integer");
    } else {
      meta.group_sizes_multiple_of = v.get<int64_t>();
    }
    if (meta.op != "grouped_gemm_tn")
      check.warnings.push_back(
          "meta.json: test.group_sizes_multiple_of only applies to grouped_gemm_tn (ignored)");
  }
  if (!test.contains("shapes") || !test["shapes"].is_array() || test["shapes"].empty()) {
    problems.add("test.shapes",
                 "missing or empty; list the small (simulated) shape first and the timed one last");
  } else {
    for (size_t i = 0; i < test["shapes"].size(); ++i) {
      const Json& shape = test["shapes"][i];
      const std::string at = "test.shapes[" + std::to_string(i) + "]";
      if (!shape.is_object() || shape.empty()) {
        problems.add(at, "not an object of dims such as {\"M\": 256}");
        continue;
      }
      Dims dims;
      for (const auto& [name, value] : shape.items()) {
        if (!value.is_number_integer() || value.get<int64_t>() < 1) {
          problems.add(at + "." + name, "must be a positive integer, got " + value.dump());
        } else {
          dims[name] = value.get<int64_t>();
        }
      }
      meta.shapes.push_back(dims);
      meta.shape_json.push_back(shape);
      if (!signature_ok) continue;
      const ShapeResult shapes = evaluate_shapes(meta, dims);
      if (!shapes.error.empty()) {
        problems.add(at, shapes.error);
        continue;
      }
      for (size_t t = 0; t < shapes.shapes.size(); ++t) {
        for (const int64_t extent : shapes.shapes[t]) {
          if (extent < 1) problems.add(at, "gives a tensor extent below 1");
        }
      }
      for (const char* key : {"flops", "bytes"}) {
        const std::string& expression = std::string(key) == "flops" ? meta.flops : meta.bytes;
        if (expression.empty()) continue;
        auto value = evaluate_dim_expression(expression, dims);
        if (!value)
          problems.add(std::string("test.") + key, "at " + at + ": " + value.error().message);
      }
      if (meta.op == "topk" && dims.count("K") && dims.count("C") && dims.at("K") > dims.at("C")) {
        problems.add(at, "K must not exceed C");
      }
      if ((meta.op == "moe_gating_topk" || meta.op == "moe_permute") && dims.count("K") &&
          dims.count("E") && dims.at("K") > dims.at("E")) {
        problems.add(at, "K must not exceed E (each token picks K distinct experts)");
      }
      if (meta.op == "attention_decode" && dims.count("HQ") && dims.count("HK") &&
          dims.at("HQ") % dims.at("HK") != 0) {
        problems.add(at, "HQ must be a multiple of HK (query heads share KV heads in groups)");
      }
      if (meta.op == "grouped_gemm_tn" && dims.count("M") &&
          dims.at("M") % meta.group_sizes_multiple_of != 0) {
        problems.add(at + ".M", "must be a multiple of test.group_sizes_multiple_of (" +
                                    std::to_string(meta.group_sizes_multiple_of) +
                                    ", 8 when absent) so the groups can be sized");
      }
    }
  }
  check.meta = std::move(meta);
  return check;
}

}  // namespace kiln::zoo
