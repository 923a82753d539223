// A small parallel loop over std::thread, for the references and the test harness's
// input generation and comparison on large shapes.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln::zoo {

// Calls body(begin, end) on chunks of at most `grain` indices covering [0, count), on up
// to std::thread::hardware_concurrency() threads (the caller's included). An exception
// thrown by the body is rethrown here after every thread has stopped.
void parallel_for(int64_t count, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

}  // namespace kiln::zoo
