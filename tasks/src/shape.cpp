#include "kiln/tasks/shape.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "kiln/base/text.h"

namespace kiln::tasks {

namespace {

std::string dims_example(const Task& task) {
  std::string example;
  for (const std::string& dim : task.dims) example += (example.empty() ? "" : ",") + dim + "=64";
  return example;
}

std::string dims_list(const Task& task) {
  std::string list;
  for (const std::string& dim : task.dims) list += (list.empty() ? "" : ", ") + dim;
  return list;
}

}  // namespace

Result<Workload> parse_shape(const Task& task, std::string_view text) {
  const std::string expected = "task " + task.name + " has dims " + dims_list(task) +
                               " (write each once, e.g. \"" + dims_example(task) + "\")";
  Workload workload;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item(trim(text.substr(start, comma - start)));
    start = comma + 1;
    const size_t equals = item.find('=');
    if (equals == std::string::npos)
      return make_error("shape \"" + std::string(text) + "\": '" + item + "' is not DIM=VALUE; " +
                        expected);
    const std::string dim(trim(std::string_view(item).substr(0, equals)));
    const std::string value(trim(std::string_view(item).substr(equals + 1)));
    if (std::find(task.dims.begin(), task.dims.end(), dim) == task.dims.end())
      return make_error("shape \"" + std::string(text) + "\": unknown dim '" + dim + "'; " +
                        expected);
    if (workload.dims.count(dim) != 0)
      return make_error("shape \"" + std::string(text) + "\": dim " + dim + " given twice; " +
                        expected);
    int64_t number = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (error != std::errc() || end != value.data() + value.size() || number < 1)
      return make_error("shape \"" + std::string(text) + "\": " + dim +
                        " must be a whole number "
                        ">= 1, got '" +
                        value + "'");
    workload.dims[dim] = number;
  }
  for (const std::string& dim : task.dims) {
    if (workload.dims.count(dim) == 0)
      return make_error("shape \"" + std::string(text) + "\": dim " + dim + " is missing; " +
                        expected);
    if (!workload.name.empty()) workload.name += 'x';
    workload.name += std::to_string(workload.dims[dim]);
  }
  const std::string large =
      "; the CPU simulator is for small shapes, use benchmark on a GPU "
      "for large ones";
  for (const TensorSpec& tensor : task.tensors) {
    int64_t elements = 1;
    for (const std::string& extent : tensor.shape) {
      auto size = evaluate(extent, workload.dims);
      if (!size || *size < 1)
        return make_error("shape " + workload.name + ": tensor " + tensor.name + " extent '" +
                          extent + "' is not a positive size" +
                          (size ? "" : " (" + size.error().message + ")"));
      if (*size > kMaxShapeTensorElements || elements > kMaxShapeTensorElements / *size)
        return make_error("shape " + workload.name + ": tensor " + tensor.name + " exceeds the " +
                          std::to_string(kMaxShapeTensorElements) + "-element cap" + large);
      elements *= *size;
    }
  }
  if (!task.flops.empty()) {
    auto flops = evaluate(task.flops, workload.dims);
    if (!flops || *flops > kMaxShapeFlops)
      return make_error("shape " + workload.name + ": " + task.flops + " exceeds the cap of " +
                        std::to_string(kMaxShapeFlops) + " flops (a 512x512x512 GEMM)" + large);
  }
  return workload;
}

}  // namespace kiln::tasks
