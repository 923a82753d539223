// A bundled task's CPU reference built as the harness builds it (kiln_compiler's KernelBuild:
// g++, cached by content) and loaded, for the tests that run a real reference.cpp.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "bundle_fixture.h"
#include "kiln/abi.h"
#include "kiln/compiler/kernel_build.h"

namespace kiln::tasks::testing {

inline compiler::KernelBuild reference_builder() {
  compiler::Toolchain toolchain;
  toolchain.abi_include = bundled_tasks_dir() / "include";
  return compiler::KernelBuild(toolchain);
}

// Builds tasks/TASK/reference.cpp into build_dir.
inline compiler::BuildRequest reference_request(const std::string& task,
                                                const std::filesystem::path& build_dir) {
  compiler::BuildRequest request;
  request.kind = compiler::BuildKind::kReference;
  request.source = bundled_tasks_dir() / task / "reference.cpp";
  request.build_dir = build_dir;
  return request;
}

// kiln_reference from a built reference.so; nullptr (and a test failure) when it does not
// load. The library stays loaded until the test binary exits.
inline kiln_reference_fn load_reference(const std::filesystem::path& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    ADD_FAILURE() << "cannot load " << library << ": " << dlerror();
    return nullptr;
  }
  void* fn = dlsym(handle, "kiln_reference");
  if (fn == nullptr) ADD_FAILURE() << library << " exports no kiln_reference";
  return reinterpret_cast<kiln_reference_fn>(fn);
}

}  // namespace kiln::tasks::testing
