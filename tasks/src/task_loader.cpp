// load_task: reads tasks/NAME/task.json, checks every field, and hashes the bundle.
// The format is described in tasks/FORMAT.md; every message has the form
// "FILE: FIELD: PROBLEM; WHAT TO DO".
#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "bundle_hash.h"
#include "expression.h"
#include "json_field.h"
#include "kiln/base/file.h"
#include "kiln/base/json_text.h"
#include "kiln/base/text.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/tensor_layout.h"
#include "task_fields.h"

namespace kiln::tasks {
namespace {

const std::set<std::string, std::less<>> kTensorDtypes = {"f16",  "bf16", "f32", "f64", "e4m3",
                                                          "e5m2", "i8",   "u8",  "i32", "i64"};
const std::set<std::string, std::less<>> kScalarDtypes = {"i64", "f64"};
constexpr size_t kMaxRank = 8;  // KILN_MAX_RANK in kiln/abi.h
// Above this a task's timings are noise, not a measurement: no budget that loose is useful.
constexpr double kMaxCv = 0.5;

std::string json_number(double value) { return nlohmann::json(value).dump(); }

bool matches_charset(const std::string& text, const std::string& extra, bool allow_upper) {
  if (text.empty()) return false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool ok = std::islower(u) || std::isdigit(u) || (allow_upper && std::isupper(u)) ||
                    extra.find(c) != std::string::npos;
    if (!ok) return false;
  }
  return true;
}

// The bundle's folder name ("fp16_gemm" for "tasks/fp16_gemm/").
std::string folder_name(const std::filesystem::path& dir) {
  auto normal = std::filesystem::absolute(dir).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  return normal.filename().string();
}

// Checks that an expression parses and names only declared dims.
void check_expression(const JsonField& field, const std::string& expression,
                      const std::vector<std::string>& dims) {
  auto names = expression_names(expression);
  if (!names) field.fail(names.error().message + "; fix the expression");
  for (const auto& name : *names) {
    if (std::find(dims.begin(), dims.end(), name) == dims.end()) {
      field.fail("expression '" + expression + "' names '" + name +
                 "', which is not a dim; use one of the dims (" + join(dims, ", ") +
                 ") or declare it in dims");
    }
  }
}

// An expression given as a JSON string or integer.
std::string read_expression(const JsonField& field, const std::vector<std::string>& dims) {
  std::string expression;
  if (field.json().is_number_integer()) {
    expression = field.json().dump();
  } else if (field.json().is_string()) {
    expression = field.string();
  } else {
    field.fail("must be an expression over the dims (a string such as \"2*M\") or an integer");
  }
  check_expression(field, expression, dims);
  return expression;
}

std::vector<std::string> read_dims(const JsonField& field) {
  std::vector<std::string> dims;
  const auto elements = field.elements();
  if (elements.empty()) field.fail("must list at least one dim, e.g. [\"M\", \"N\", \"K\"]");
  for (const auto& element : elements) {
    std::string dim = element.identifier();
    if (dim == "name") element.fail("'name' is reserved for the workload name; rename the dim");
    if (std::find(dims.begin(), dims.end(), dim) != dims.end()) {
      element.fail("repeats the dim '" + dim + "'; list each dim once");
    }
    dims.push_back(std::move(dim));
  }
  return dims;
}

TensorSpec read_tensor(const JsonField& field, const std::vector<std::string>& dims,
                       bool is_output) {
  field.allow_only({"name", "dtype", "shape"});
  TensorSpec tensor;
  tensor.is_output = is_output;
  tensor.name = field.at("name").identifier();
  const auto dtype = field.at("dtype");
  tensor.dtype = dtype.string();
  if (!kTensorDtypes.contains(tensor.dtype)) {
    dtype.fail("'" + tensor.dtype + "' is not a known dtype; use one of " +
               join(kTensorDtypes, ", "));
  }
  const auto shape = field.at("shape").elements();
  if (shape.empty() || shape.size() > kMaxRank) {
    field.at("shape").fail("must have between 1 and " + std::to_string(kMaxRank) +
                           " entries (the rank), got " + std::to_string(shape.size()));
  }
  for (const auto& extent : shape) tensor.shape.push_back(read_expression(extent, dims));
  return tensor;
}

ScalarSpec read_scalar(const JsonField& field, const std::vector<std::string>& dims) {
  field.allow_only({"name", "dtype", "value"});
  ScalarSpec scalar;
  scalar.name = field.at("name").identifier();
  const auto dtype = field.at("dtype");
  scalar.dtype = dtype.string();
  if (!kScalarDtypes.contains(scalar.dtype)) {
    dtype.fail("'" + scalar.dtype + "' is not a scalar dtype; use i64 or f64");
  }
  const auto value = field.at("value");
  if (scalar.dtype == "f64" && value.json().is_number_float()) {
    value.number();  // rejects NaN and infinities
    scalar.value = value.json().dump();
  } else {
    scalar.value = read_expression(value, dims);
  }
  return scalar;
}

void read_signature(const JsonField& field, const std::vector<std::string>& dims, Task& task) {
  field.allow_only({"inputs", "outputs", "scalars"});
  std::set<std::string> names;
  auto claim = [&names](const JsonField& element, const std::string& name) {
    if (!names.insert(name).second) {
      element.at("name").fail("repeats the name '" + name +
                              "'; tensors and scalars need distinct names");
    }
  };
  for (bool is_output : {false, true}) {
    const auto list = field.at(is_output ? "outputs" : "inputs");
    const auto elements = list.elements();
    if (elements.empty()) list.fail("must list at least one tensor");
    for (const auto& element : elements) {
      task.tensors.push_back(read_tensor(element, dims, is_output));
      claim(element, task.tensors.back().name);
    }
  }
  if (const auto scalars = field.find("scalars")) {
    for (const auto& element : scalars->elements()) {
      task.scalars.push_back(read_scalar(element, dims));
      claim(element, task.scalars.back().name);
    }
  }
}

// A group_index input: a rank-1 integer tensor whose values the dims fix (kiln/group_layout.h).
void read_group_index(const JsonField& entry, const TensorSpec& tensor,
                      const std::vector<std::string>& dims, Distribution& distribution) {
  entry.allow_only({"kind", "groups", "rows_per_group", "align", "seed", "spread"});
  if (tensor.dtype != "i32" && tensor.dtype != "i64") {
    entry.at("kind").fail("group_index needs an i32 or i64 tensor, and " + tensor.name + " is " +
                          tensor.dtype + "; change its dtype or the distribution");
  }
  if (tensor.shape.size() != 1) {
    entry.at("kind").fail("group_index needs a rank-1 tensor (one index per row), and " +
                          tensor.name + " has rank " + std::to_string(tensor.shape.size()));
  }
  distribution.groups = read_expression(entry.at("groups"), dims);
  distribution.rows_per_group = read_expression(entry.at("rows_per_group"), dims);
  distribution.align = read_expression(entry.at("align"), dims);
  distribution.seed = read_expression(entry.at("seed"), dims);
  if (const auto spread = entry.find("spread")) {
    distribution.spread = spread->nonnegative_number();
    if (distribution.spread > 1)
      spread->fail("must be between 0 and 1 (a share of rows_per_group)");
  }
}

void read_distributions(const JsonField& field, const std::vector<std::string>& dims, Task& task) {
  for (const auto& key : field.keys()) {
    const auto it = std::find_if(task.tensors.begin(), task.tensors.end(),
                                 [&](const auto& t) { return t.name == key && !t.is_output; });
    if (it == task.tensors.end()) {
      field.at(key).fail("is not an input tensor; give distributions for inputs only");
    }
    const auto entry = field.at(key);
    const auto kind = entry.at("kind");
    it->distribution.kind = kind.string();
    if (it->distribution.kind == "group_index") {
      read_group_index(entry, *it, dims, it->distribution);
      continue;
    }
    if (it->distribution.kind != "uniform") {
      kind.fail("'" + it->distribution.kind +
                "' is not a known distribution; use \"uniform\" or \"group_index\"");
    }
    entry.allow_only({"kind", "low", "high"});
    it->distribution.low = entry.at("low").number();
    it->distribution.high = entry.at("high").number();
    if (!(it->distribution.low < it->distribution.high)) {
      entry.at("high").fail("must be greater than low");
    }
  }
  for (const auto& tensor : task.tensors) {
    if (!tensor.is_output && !field.find(tensor.name)) {
      throw FieldError{field.path() + "." + tensor.name,
                       "is missing; give every input a distribution, e.g. "
                       "{\"kind\": \"uniform\", \"low\": -1, \"high\": 1}"};
    }
  }
}

IgnoredRows read_ignored_rows(const JsonField& field, const Task& task) {
  field.allow_only({"output", "index", "equals"});
  IgnoredRows rule;
  const auto output = field.at("output");
  rule.output = output.identifier();
  const auto index = field.at("index");
  rule.index = index.identifier();
  rule.equals = field.at("equals").integer_between(std::numeric_limits<int64_t>::min(),
                                                   std::numeric_limits<int64_t>::max());
  const auto find = [&task](const std::string& name) {
    return std::find_if(task.tensors.begin(), task.tensors.end(),
                        [&](const auto& t) { return t.name == name; });
  };
  const auto out = find(rule.output);
  if (out == task.tensors.end() || !out->is_output) {
    output.fail("'" + rule.output +
                "' is not an output tensor; name the output whose rows "
                "fall outside the contract");
  }
  const auto in = find(rule.index);
  if (in == task.tensors.end() || in->is_output) {
    index.fail("'" + rule.index + "' is not an input tensor; name a group_index input");
  }
  if (!in->distribution.fixed_by_dims()) {
    index.fail("'" + rule.index + "' has distribution '" + in->distribution.kind +
               "'; the index must be a group_index input, whose values the dims fix, so the "
               "harness knows the ignored rows without reading the candidate's memory");
  }
  return rule;
}

std::vector<IgnoredRows> read_ignore_rows_where(const JsonField& field, const Task& task) {
  std::vector<IgnoredRows> rules;
  if (field.json().is_object()) {
    rules.push_back(read_ignored_rows(field, task));
    return rules;
  }
  if (!field.json().is_array()) {
    field.fail(
        "must be an object {\"output\": ..., \"index\": ..., \"equals\": ...} or an "
        "array of them");
  }
  for (const auto& element : field.elements()) rules.push_back(read_ignored_rows(element, task));
  return rules;
}

std::vector<Workload> read_workloads(const JsonField& field, const std::vector<std::string>& dims) {
  std::vector<Workload> workloads;
  const auto elements = field.elements();
  if (elements.empty()) field.fail("must list at least one workload");
  for (const auto& element : elements) {
    Workload workload;
    const auto name = element.at("name");
    workload.name = name.string();
    if (!matches_charset(workload.name, "_.-", true)) {
      name.fail("must be a non-empty name of letters, digits, '_', '.' or '-', got '" +
                workload.name + "'");
    }
    for (size_t j = 0; j < workloads.size(); ++j) {
      if (workloads[j].name == workload.name) {
        name.fail("'" + workload.name + "' repeats " + field.path() + "[" + std::to_string(j) +
                  "].name; give each workload a unique name");
      }
    }
    for (const auto& key : element.keys()) {
      if (key == "name") continue;
      if (std::find(dims.begin(), dims.end(), key) == dims.end()) {
        element.at(key).fail("is not a dim; a workload holds \"name\" and one value per dim (" +
                             join(dims, ", ") + "); remove it or declare it in dims");
      }
    }
    for (const auto& dim : dims) {
      if (!element.find(dim)) {
        throw FieldError{
            element.path() + "." + dim,
            "is missing; give a positive integer for every dim (" + join(dims, ", ") + ")"};
      }
      workload.dims[dim] = element.at(dim).positive_integer();
    }
    workloads.push_back(std::move(workload));
  }
  return workloads;
}

// The first extent of a tensor at a workload (shapes are checked before this runs).
int64_t leading_extent(const TensorSpec& tensor, const std::map<std::string, int64_t>& dims) {
  auto extent = evaluate(tensor.shape.front(), dims);
  return extent ? *extent : 0;
}

// Every group_index input must have a layout at the workload, and every ignore_rows_where index
// one entry per row of its output.
void check_group_layouts(const Task& task, const std::map<std::string, int64_t>& dims,
                         const std::string& where) {
  for (const auto& tensor : task.tensors) {
    if (tensor.is_output || tensor.distribution.kind != "group_index") continue;
    auto values = group_index_values(tensor.distribution, dims, leading_extent(tensor, dims));
    if (!values) {
      throw FieldError{where, "input_distribution." + tensor.name + ": " + values.error().message +
                                  "; change the workload or the fields"};
    }
  }
  for (size_t r = 0; r < task.ignore_rows_where.size(); ++r) {
    const IgnoredRows& rule = task.ignore_rows_where[r];
    if (rule.untouched) continue;  // a list of rows, any length (zoo tasks only)
    const auto named = [&task](const std::string& name) -> const TensorSpec& {
      return *std::find_if(task.tensors.begin(), task.tensors.end(),
                           [&](const auto& t) { return t.name == name; });
    };
    const int64_t rows = leading_extent(named(rule.output), dims);
    const int64_t entries = leading_extent(named(rule.index), dims);
    if (rows != entries) {
      throw FieldError{where, "ignore_rows_where: " + rule.index + " has " +
                                  std::to_string(entries) + " entries but " + rule.output +
                                  " has " + std::to_string(rows) +
                                  " rows; the index needs one entry per output row"};
    }
  }
}

// Every shape, scalar and size expression must evaluate at every workload, and
// every extent must be positive, so the harness can allocate the tensors.
void check_workload_sizes(const Task& task, const std::vector<Workload>& workloads,
                          const std::string& list_path) {
  for (size_t w = 0; w < workloads.size(); ++w) {
    const std::string where = list_path + "[" + std::to_string(w) + "]";
    const auto& dims = workloads[w].dims;
    size_t inputs = 0;
    size_t outputs = 0;
    for (const auto& tensor : task.tensors) {
      const std::string tensor_path = "signature." +
                                      std::string(tensor.is_output ? "outputs" : "inputs") + "[" +
                                      std::to_string(tensor.is_output ? outputs++ : inputs++) + "]";
      int64_t elements = 1;
      for (size_t d = 0; d < tensor.shape.size(); ++d) {
        const std::string shape_path = tensor_path + ".shape[" + std::to_string(d) + "]";
        auto extent = evaluate(tensor.shape[d], dims);
        if (!extent) throw FieldError{where, shape_path + ": " + extent.error().message};
        if (*extent < 1) {
          throw FieldError{where, shape_path + " ('" + tensor.shape[d] + "') is " +
                                      std::to_string(*extent) +
                                      " at this workload; every extent must be positive, so "
                                      "change the workload or the shape"};
        }
        if (__builtin_mul_overflow(elements, *extent, &elements)) {
          throw FieldError{where, tensor_path +
                                      " has more elements than fit in int64; "
                                      "use smaller dims"};
        }
      }
    }
    check_group_layouts(task, dims, where);
    for (size_t s = 0; s < task.scalars.size(); ++s) {
      // An f64 scalar may be a plain number ("0.125"), which is no integer expression.
      if (task.scalars[s].dtype == "f64" && !expression_names(task.scalars[s].value)) continue;
      auto value = evaluate(task.scalars[s].value, dims);
      if (!value) {
        throw FieldError{
            where, "signature.scalars[" + std::to_string(s) + "].value: " + value.error().message};
      }
    }
    for (const auto& [field, expression] :
         {std::pair<std::string, std::string>{"flops", task.flops}, {"bytes", task.bytes}}) {
      if (expression.empty()) continue;
      auto value = evaluate(expression, dims);
      if (!value) throw FieldError{where, field + ": " + value.error().message};
      if (*value < 0)
        throw FieldError{where, field + " is negative at this workload; fix the expression"};
    }
  }
}

// max_cv: the timing noise the task accepts, a fraction in (0, kMaxCv].
double read_max_cv(const JsonField& field) {
  if (!field.json().is_number())
    field.fail(
        "must be a number: the noise the task's timings may show, as a fraction (0.05 "
        "for 5%)");
  const double value = field.number();
  if (!(value > 0 && value <= kMaxCv)) {
    field.fail("is " + field.json().dump() + "; it must be above 0 and at most " +
               json_number(kMaxCv) + " (a fraction: 0.05 is 5%, not 5)");
  }
  return value;
}

void read_tolerance(const JsonField& field, Tolerance& tolerance) {
  field.allow_only({"atol", "rtol", "max_mismatch_fraction"});
  tolerance.atol = field.at("atol").nonnegative_number();
  tolerance.rtol = field.at("rtol").nonnegative_number();
  if (const auto fraction = field.find("max_mismatch_fraction")) {
    tolerance.max_mismatch_fraction = fraction->nonnegative_number();
    if (tolerance.max_mismatch_fraction > 1)
      fraction->fail("must be at most 1 (a share of elements)");
  }
}

// A bundle file: a relative path inside the bundle that names an existing file.
std::filesystem::path read_bundle_file(const JsonField& field, const std::filesystem::path& dir) {
  const std::string name = field.nonempty_string();
  const std::filesystem::path relative(name);
  bool escapes = relative.is_absolute() || name.find('\n') != std::string::npos;
  for (const auto& part : relative) escapes = escapes || part == "..";
  if (escapes) field.fail("'" + name + "' must be a path inside the bundle folder, without '..'");
  auto path = dir / relative;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    field.fail("'" + name + "' does not exist in " + dir.string() +
               "; add the file or fix the path");
  }
  return path;
}

void read_files(const JsonField& field, const std::filesystem::path& dir, Task& task) {
  field.allow_only({"reference", "gpu_reference", "baseline", "starter", "readme"});
  task.reference_path = read_bundle_file(field.at("reference"), dir);
  if (const auto gpu = field.find("gpu_reference"))
    task.gpu_reference_path = read_bundle_file(*gpu, dir);
  task.baseline_path = read_bundle_file(field.at("baseline"), dir);
  task.starter_path = read_bundle_file(field.at("starter"), dir);
  task.readme_path = read_bundle_file(field.at("readme"), dir);
}

void read_baseline(const JsonField& field, const std::string& baseline_file, Task& task) {
  field.allow_only({"name", "file", "libraries"});
  task.baseline_name = field.at("name").nonempty_string();
  if (const auto file = field.find("file"); file && file->string() != baseline_file) {
    file->fail("'" + file->string() + "' differs from files.baseline '" + baseline_file +
               "'; make them equal or drop this field");
  }
  if (const auto libraries = field.find("libraries")) {
    for (const auto& element : libraries->elements()) {
      std::string library = element.nonempty_string();
      if (!matches_charset(library, "_+-.", true)) {
        element.fail("'" + library + "' is not a library link name (as in -lNAME)");
      }
      task.baseline_libraries.push_back(std::move(library));
    }
  }
}

Task read_task(const JsonField& root, const std::filesystem::path& dir) {
  root.allow_only({"name", "title", "description", "arch", "dims", "signature",
                   "input_distribution", "ignore_rows_where", "workloads", "sim_workloads",
                   "tolerance", "flops", "bytes", "baseline", "banned_symbols", "rules",
                   "allow_host_sync", "max_cv", "files"});
  Task task;
  task.dir = dir;
  const auto name = root.at("name");
  task.name = name.string();
  if (!matches_charset(task.name, "_", false)) {
    name.fail("'" + task.name + "' must use lowercase letters, digits and '_'");
  }
  if (const auto folder = folder_name(dir); task.name != folder) {
    name.fail("'" + task.name + "' differs from the bundle folder name '" + folder +
              "'; rename one so they match");
  }
  task.title = root.at("title").nonempty_string();
  task.description = root.at("description").nonempty_string();
  const auto arch = root.at("arch");
  task.arch = arch.string();
  if (task.arch.rfind("sm_", 0) != 0 || !matches_charset(task.arch.substr(3), "", false) ||
      !std::isdigit(static_cast<unsigned char>(task.arch.size() > 3 ? task.arch[3] : 'x'))) {
    arch.fail("'" + task.arch + "' is not a GPU architecture; write e.g. \"sm_90a\"");
  }
  task.dims = read_dims(root.at("dims"));
  read_signature(root.at("signature"), task.dims, task);
  read_distributions(root.at("input_distribution"), task.dims, task);
  if (const auto ignored = root.find("ignore_rows_where"))
    task.ignore_rows_where = read_ignore_rows_where(*ignored, task);
  if (const auto flops = root.find("flops")) task.flops = read_expression(*flops, task.dims);
  task.bytes = read_expression(root.at("bytes"), task.dims);
  task.workloads = read_workloads(root.at("workloads"), task.dims);
  task.sim_workloads = read_workloads(root.at("sim_workloads"), task.dims);
  check_workload_sizes(task, task.workloads, "workloads");
  check_workload_sizes(task, task.sim_workloads, "sim_workloads");
  read_tolerance(root.at("tolerance"), task.tolerance);
  if (const auto banned = root.find("banned_symbols")) {
    for (const auto& element : banned->elements())
      task.banned_symbols.push_back(element.identifier());
  }
  if (const auto rules = root.find("rules")) task.rules = rules->string_list();
  if (const auto sync = root.find("allow_host_sync")) {
    if (!sync->json().is_boolean()) sync->fail("must be true or false");
    task.allow_host_sync = sync->json().get<bool>();
  }
  if (const auto cv = root.find("max_cv")) task.max_cv = read_max_cv(*cv);
  const auto files = root.at("files");
  read_files(files, dir, task);
  read_baseline(root.at("baseline"), files.at("baseline").string(), task);
  return task;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; keep the rest.
std::string parse_problem(const std::string& what) {
  const auto end = what.find("] ");
  return what.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? what.substr(end + 2)
                                                                            : what;
}

}  // namespace

void read_task_signature(const JsonField& field, const std::vector<std::string>& dims, Task& task) {
  read_signature(field, dims, task);
}

void check_task_workloads(const Task& task, const std::vector<Workload>& workloads,
                          const std::string& list_path) {
  check_workload_sizes(task, workloads, list_path);
}

std::string json_problem(const std::string& what) { return parse_problem(what); }

std::vector<std::filesystem::path> bundle_files(const Task& task) {
  std::vector<std::filesystem::path> files = {task.dir / "task.json", task.reference_path,
                                              task.baseline_path, task.starter_path,
                                              task.readme_path};
  if (!task.gpu_reference_path.empty()) files.push_back(task.gpu_reference_path);
  return files;
}

Result<Task> load_task(const std::filesystem::path& bundle_dir) {
  // "tasks/x/" and "tasks/x" name the same bundle; drop the trailing separator so
  // paths relative to the bundle come out the same.
  const auto dir = bundle_dir.has_filename() ? bundle_dir : bundle_dir.parent_path();
  const auto file = dir / "task.json";
  const std::string label = file.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    return make_error(label +
                      ": does not exist; a task bundle is a folder with a task.json "
                      "(see tasks/FORMAT.md)");
  }
  auto text = read_file(file);
  if (!text) return make_error(label + ": " + text.error().message);
  // Bounded, and never throwing: the runner loads task.json files that clients sent.
  auto document = parse_json_bounded(*text);
  if (!document) return make_error(label + ": " + document.error().message + "; fix the syntax");
  try {
    Task task = read_task(task_document(*document), dir);
    auto relative = [&dir](const std::filesystem::path& path) {
      return path.lexically_relative(dir).generic_string();
    };
    std::vector<std::string> files;
    for (const auto& path : bundle_files(task)) files.push_back(relative(path));
    auto digest = hash_bundle(dir, files);
    if (!digest) return make_error(label + ": " + digest.error().message);
    task.sha256 = std::move(*digest);
    return task;
  } catch (const FieldError& e) {
    return make_error(label + ": " + (e.field.empty() ? "" : e.field + ": ") + e.message);
  } catch (const nlohmann::json::exception& e) {
    return make_error(label + ": " + parse_problem(e.what()));
  }
}

}  // namespace kiln::tasks
