// Landlock restricts the calling thread only (before ABI 8's LANDLOCK_RESTRICT_SELF_TSYNC), so
// the threads that exist already, CUDA's among them, are reached the way glibc's setuid reaches
// every thread: a signal to each, whose handler restricts that thread with the same ruleset.
#pragma once

#include <string>
#include <vector>

namespace kiln::confine_detail {

struct ThreadsRestricted {
  int restricted = 0;                  // other threads now in a Landlock domain
  std::vector<std::string> unreached;  // one note per thread left outside any domain, and why
};

// Restricts every thread of the process but the calling one with `ruleset_fd`, until a look at
// /proc/self/task finds none left (threads started meanwhile by an unrestricted thread are found
// on the next look). A thread that blocks the signal (SIGURG, whose default action is to ignore
// it, so a late or stray one does no harm), or does not answer within 2 s, is left out and named.
// Every thread must have no_new_privs set. Not reentrant: the caller serializes.
ThreadsRestricted restrict_other_threads(int ruleset_fd);

}  // namespace kiln::confine_detail
