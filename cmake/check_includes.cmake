# The include graph, checked against the layering table (cmake/kiln_layers.cmake):
#   cmake -DKILN_ROOT=<source dir> -P cmake/check_includes.cmake
# For every production source file (not tests/, bench/, the zoo's kernels or task bundles), each
# `#include "kiln/..."` is resolved to the header's file in the tree and so to the library that
# owns it; the including library must be that library or one it may reach through the table's
# links (downward). Prints every arrow that runs up or sideways, and fails if there is one.
# Programs (apps/) may include any library.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/kiln_layers.cmake)

# Folder prefix -> library, most specific first.
set(_owners
  "base/sqlite/=kiln_sqlite" "base/http/=kiln_http" "base/confine/=kiln_confine"
  "base/=kiln_base" "mcp/=kiln_mcp"
  "tasks/=kiln_tasks" "kb/zoo/references/=kiln_zoo_references" "kb/=kiln_kb"
  "engines/ptx/=kiln_ptx" "engines/compiler/=kiln_compiler"
  "engines/sim/runtime/=kiln_cudart_sim" "engines/sim/=kiln_sim" "engines/check/=kiln_check"
  "frontier/=kiln_frontier" "replay/=kiln_replay" "runner/protocol/=kiln_runner_protocol"
  "runner/worker/=kiln_worker_gpu" "runner/=kiln_runner" "tools/=kiln_tools" "taskcheck/=kiln_taskcheck" "apps/=apps")

function(_owner path out)
  foreach(entry IN LISTS _owners)
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 prefix)
    list(GET pair 1 library)
    string(FIND "${path}" "${prefix}" at)
    if(at EQUAL 0)
      set(${out} ${library} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# Everything a library may reach: its allowed links, and theirs, transitively.
function(_reach library out)
  set(seen "")
  set(todo ${_kiln_may_link_${library}})
  while(todo)
    list(POP_FRONT todo next)
    if(NOT next IN_LIST seen)
      list(APPEND seen ${next})
      list(APPEND todo ${_kiln_may_link_${next}})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE _sources RELATIVE ${KILN_ROOT}
  ${KILN_ROOT}/base/*.cpp ${KILN_ROOT}/base/*.h ${KILN_ROOT}/mcp/*.cpp ${KILN_ROOT}/mcp/*.h
  ${KILN_ROOT}/tasks/*.cpp ${KILN_ROOT}/tasks/*.h ${KILN_ROOT}/kb/*.cpp ${KILN_ROOT}/kb/*.h
  ${KILN_ROOT}/engines/*.cpp ${KILN_ROOT}/engines/*.h ${KILN_ROOT}/engines/*.cu
  ${KILN_ROOT}/frontier/*.cpp ${KILN_ROOT}/frontier/*.h ${KILN_ROOT}/replay/*.cpp
  ${KILN_ROOT}/replay/*.h ${KILN_ROOT}/runner/*.cpp
  ${KILN_ROOT}/runner/*.h ${KILN_ROOT}/runner/*.cu ${KILN_ROOT}/tools/*.cpp ${KILN_ROOT}/tools/*.h
  ${KILN_ROOT}/taskcheck/*.cpp ${KILN_ROOT}/taskcheck/*.h)
file(GLOB_RECURSE _headers RELATIVE ${KILN_ROOT} ${KILN_ROOT}/*/include/kiln/*.h
  ${KILN_ROOT}/*/*/include/kiln/*.h ${KILN_ROOT}/*/*/*/include/kiln/*.h)
list(FILTER _sources EXCLUDE REGEX "^(kb/zoo/[^/]+/|tasks/[^/]+/(baseline|starter|reference))")
list(FILTER _sources INCLUDE REGEX "^(base|mcp|tasks|kb|engines|frontier|replay|runner|tools|taskcheck)/")
list(FILTER _headers EXCLUDE REGEX "(^|/)(build[^/]*|node_modules)/")

set(_problems "")
set(_count 0)
foreach(source IN LISTS _sources)
  _owner(${source} from)
  if(NOT from)
    continue()
  endif()
  _reach(${from} reach)
  file(STRINGS ${KILN_ROOT}/${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]kiln/")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<](kiln/[^\">]+)[\">].*" "\\1" header
                         "${line}")
    if(header STREQUAL "kiln/abi.h")
      continue()  # the candidate ABI: a contract every layer may read
    endif()
    set(to "")
    foreach(candidate IN LISTS _headers)
      string(FIND "${candidate}" "/include/${header}" at)
      if(at GREATER -1)
        string(LENGTH "${candidate}" length)
        string(LENGTH "/include/${header}" tail)
        math(EXPR end "${at} + ${tail}")
        if(end EQUAL length)
          _owner(${candidate} to)
          break()
        endif()
      endif()
    endforeach()
    math(EXPR _count "${_count} + 1")
    if(NOT to)
      string(APPEND _problems "\n  ${source}: ${header} is not a header of any kiln library")
    elseif(NOT to STREQUAL from AND NOT to IN_LIST reach)
      string(APPEND _problems "\n  ${source} (${from}) includes ${header} (${to})")
    endif()
  endforeach()
endforeach()
if(_problems)
  message(FATAL_ERROR "kiln: includes that run against the layering:${_problems}")
endif()
message(STATUS "kiln: ${_count} includes of kiln headers, none against the layering")
