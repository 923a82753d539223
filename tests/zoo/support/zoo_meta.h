// A zoo entry's meta.json (kb/zoo/README.md) read into plain structs and checked against
// the README's rules and the op table, with every problem described so its author can fix
// it. The meta checker (zoo_meta_valid), the GPU test and kiln_zoo_record share it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/abi.h"

namespace kiln::zoo {

using Dims = std::map<std::string, int64_t>;

struct TensorDecl {
  std::string name;
  kiln_dtype dtype = KILN_F32;
  std::vector<std::string> shape;  // dim expressions, numbers written as text
};

struct ScalarDecl {
  std::string name;
  kiln_dtype dtype = KILN_F64;  // KILN_I64 or KILN_F64
  int64_t i = 0;                // the value when dtype is KILN_I64
  double f = 0;                 // the value when dtype is KILN_F64
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
};

struct ZooMeta {
  std::filesystem::path dir;  // kb/zoo/ID
  std::string id;
  std::string title;
  std::string op;
  std::string arch;
  std::vector<std::string> techniques;
  std::vector<std::string> dtypes;
  std::vector<TensorDecl> inputs;
  std::vector<TensorDecl> outputs;
  std::vector<ScalarDecl> scalars;
  std::vector<Dims> shapes;                        // test.shapes, in order; the last one is timed
  std::vector<nlohmann::ordered_json> shape_json;  // the same shapes as written, for "measured"
  double atol = 0;
  double rtol = 0;
  // test.tolerance.outputs: {"NAME": {"atol", "rtol"}} for outputs that need their own (an fp8
  // output beside a bf16 one); every other output uses atol and rtol.
  std::map<std::string, Tolerance> output_tolerance;
  double range_low = -1;
  double range_high = 1;
  std::string flops;                    // expression, may be empty
  std::string bytes;                    // expression, may be empty
  int64_t group_sizes_multiple_of = 8;  // grouped_gemm_tn: test.group_sizes_multiple_of
  nlohmann::ordered_json measured = nlohmann::ordered_json::array();

  // The tolerance the output named `output` is compared with.
  Tolerance tolerance_for(const std::string& output) const {
    const auto it = output_tolerance.find(output);
    return it != output_tolerance.end() ? it->second : Tolerance{atol, rtol};
  }
};

// What reading an entry found: the parsed meta (absent when meta.json is unreadable or
// structurally broken) and every problem, each a sentence naming the field.
struct MetaCheck {
  std::optional<ZooMeta> meta;
  std::vector<std::string> problems;  // empty: the entry is valid
  std::vector<std::string> warnings;  // worth a look, not an error
};

// Reads and checks kb/zoo/ID/ (meta.json, NOTES.md, kernel.cu). `techniques` is the
// vocabulary of kb/zoo/techniques.json; `entry_ids` the folders that exist (for "related").
MetaCheck check_zoo_entry(const std::filesystem::path& entry_dir,
                          const std::set<std::string>& techniques,
                          const std::set<std::string>& entry_ids);

// Loads kb/zoo/techniques.json's keys; problems go to `problems`.
std::set<std::string> load_techniques(const std::filesystem::path& zoo_dir,
                                      std::vector<std::string>& problems);

// The entry folders of kb/zoo (those holding a meta.json or a kernel.cu), sorted by name.
std::vector<std::filesystem::path> find_zoo_entries(const std::filesystem::path& zoo_dir);

// Evaluates every tensor shape of `meta` at `dims`: shape[t] for inputs then outputs.
// Fails with a message on an expression error or a negative extent.
struct ShapeResult {
  std::vector<std::vector<int64_t>> shapes;
  std::string error;  // empty on success
};
ShapeResult evaluate_shapes(const ZooMeta& meta, const Dims& dims);

// "{K: 256, M: 256, N: 256}" for messages (dims in name order).
std::string format_dims(const Dims& dims);
// "{M: 256, N: 256, K: 256}": a test.shapes entry in the order meta.json writes it.
std::string format_shape(const nlohmann::ordered_json& shape);

}  // namespace kiln::zoo
