# ctest fixture setup: install the pinned npm packages (package-lock.json) into
# tests/integration/node_modules when they are missing or older than the lockfile.
#   cmake -DNPM=/usr/bin/npm -DDIR=/path/to/tests/integration -P npm_ci.cmake
if(NOT NPM OR NOT DIR)
  message(FATAL_ERROR "usage: cmake -DNPM=<npm> -DDIR=<tests/integration> -P npm_ci.cmake")
endif()

set(stamp "${DIR}/node_modules/.package-lock.json") # written by npm after every install
if(EXISTS "${stamp}" AND NOT "${DIR}/package-lock.json" IS_NEWER_THAN "${stamp}")
  message(STATUS "node_modules is up to date with package-lock.json")
  return()
endif()

message(STATUS "running npm ci --no-audit --no-fund in ${DIR}")
execute_process(
  COMMAND "${NPM}" ci --no-audit --no-fund
  WORKING_DIRECTORY "${DIR}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci failed (${rc}); the integration tests need the npm registry once")
endif()
