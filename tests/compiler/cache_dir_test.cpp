// kiln/base/cache_dir.h: where every cache of kiln lives.
#include "kiln/base/cache_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <optional>
#include <string>

namespace kiln {
namespace {

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CacheDir, KilnCacheDirWins) {
  ScopedEnv cache("KILN_CACHE_DIR", "/somewhere/kiln");
  ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  EXPECT_EQ(default_cache_dir(), std::filesystem::path("/somewhere/kiln"));
}

TEST(CacheDir, XdgCacheHomeIsNextThenHome) {
  ScopedEnv cache("KILN_CACHE_DIR", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(default_cache_dir(), std::filesystem::path("/xdg/kiln"));
  }
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(default_cache_dir(), std::filesystem::path("/home/someone/.cache/kiln"));
}

TEST(CacheDir, FallsBackToATempFolderWithoutHome) {
  ScopedEnv cache("KILN_CACHE_DIR", nullptr);
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv home("HOME", nullptr);
  EXPECT_NE(default_cache_dir().filename().string().find("kiln-cache-"), std::string::npos);
}

}  // namespace
}  // namespace kiln
