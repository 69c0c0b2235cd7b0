// Scope and wildcard tests: '%' wildcards, '!' exclusions, MAIN, basename matching, system headers.
// Pure functions; the test thread only.
#include <gtest/gtest.h>

#include "symbols/interner.h"
#include "symbols/symbol_map.h"

namespace whatif::symbols {
namespace {

TEST(Wildcard, MatchesWholeStrings) {
  EXPECT_TRUE(wildcard_match("abc", "abc"));
  EXPECT_FALSE(wildcard_match("abc", "abcd"));
  EXPECT_FALSE(wildcard_match("abc", "ab"));
  EXPECT_TRUE(wildcard_match("%", ""));
  EXPECT_TRUE(wildcard_match("%", "anything/at/all"));
  EXPECT_TRUE(wildcard_match("%.c", "/src/main.c"));
  EXPECT_FALSE(wildcard_match("%.c", "/src/main.cc"));
  EXPECT_TRUE(wildcard_match("/src/%/x%.h", "/src/a/b/xy.h"));
  EXPECT_TRUE(wildcard_match("a%b%c", "aXbYbZc"));
  EXPECT_FALSE(wildcard_match("a%b%c", "aXbYbZ"));
  EXPECT_TRUE(wildcard_match("%%", "x"));
  EXPECT_FALSE(wildcard_match("", "x"));
  EXPECT_TRUE(wildcard_match("", ""));
}

LoadedObject object(std::string path, bool is_main) {
  LoadedObject o;
  o.path = std::move(path);
  o.is_main = is_main;
  return o;
}

TEST(Scope, DefaultIsTheMainExecutableAndItsOwnLibraries) {
  // Bug: the default was the main executable alone, so a library built beside the program was out
  // of scope and a --fixed-line in it was never sped up (0.5% predicted for 29.7%).
  Scope scope;
  scope.runtime_path = "/opt/whatif/lib/libwhatif.so";
  EXPECT_TRUE(scope.object_in_scope(object("/app/bin/server", true)));
  EXPECT_TRUE(scope.object_in_scope(object("/app/build/libwork.so", false))) << "the program's own";
  EXPECT_TRUE(scope.object_in_scope(object("/home/me/proj/lib/libcore.so.1", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/usr/lib/x86_64-linux-gnu/libc.so.6", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/lib/x86_64-linux-gnu/libstdc++.so.6", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/lib64/ld-linux-x86-64.so.2", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/usr/local/lib/libinstalled.so", false))) << "installed";
  EXPECT_FALSE(scope.object_in_scope(object("/opt/whatif/lib/libwhatif.so", false))) << "whatif's runtime";
  EXPECT_FALSE(scope.object_in_scope(object("linux-vdso.so.1", false)));
  scope.binary_patterns = {"MAIN"};
  EXPECT_FALSE(scope.object_in_scope(object("/app/build/libwork.so", false))) << "-b MAIN: Coz's default";
}

TEST(Scope, BinaryPatternsWildcardsAndExclusions) {
  Scope scope;
  scope.binary_patterns = {"MAIN", "libapp%"};
  EXPECT_TRUE(scope.object_in_scope(object("/opt/lib/libapp_core.so", false)));  // basename match
  EXPECT_FALSE(scope.object_in_scope(object("/opt/lib/libother.so", false)));
  scope.binary_patterns = {"%", "!%/libc.so%", "!MAIN"};
  EXPECT_TRUE(scope.object_in_scope(object("/opt/lib/libother.so", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/lib/x86_64-linux-gnu/libc.so.6", false)));
  EXPECT_FALSE(scope.object_in_scope(object("/app/server", true)));
  scope.binary_patterns = {"!libc.so%"};  // only exclusions: everything else is in scope
  EXPECT_TRUE(scope.object_in_scope(object("/app/server", true)));
  EXPECT_FALSE(scope.object_in_scope(object("/lib/libc.so.6", false)));
}

TEST(Scope, SourcePatternsAndSystemHeaders) {
  Scope scope;
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/main.cpp"));
  EXPECT_FALSE(scope.file_in_scope("/usr/include/c++/12/bits/stl_vector.h"));
  EXPECT_FALSE(scope.file_in_scope("/usr/include/stdio.h"));
  EXPECT_FALSE(scope.file_in_scope("/usr/lib/gcc/x86_64-linux-gnu/12/include/emmintrin.h"));
  EXPECT_FALSE(scope.file_in_scope(""));
  scope.source_patterns = {"%/src/%", "!%_test.cpp"};
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/src/main.cpp"));
  EXPECT_FALSE(scope.file_in_scope("/home/me/app/src/main_test.cpp"));
  EXPECT_FALSE(scope.file_in_scope("/home/me/app/lib/x.cpp"));
  scope.source_patterns = {"main.cpp"};  // a bare name matches the last component
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/src/main.cpp"));
  EXPECT_FALSE(scope.file_in_scope("/home/me/app/src/xmain.cpp"));
  scope.source_patterns = {"!%/vendor/%"};
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/src/main.cpp"));
  EXPECT_FALSE(scope.file_in_scope("/home/me/app/vendor/zlib.c"));
}

TEST(Scope, RustStandardLibraryAndDependencyCrates) {
  Scope scope;
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/src/main.rs"));
  EXPECT_FALSE(scope.file_in_scope("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/num/uint_macros.rs"));
  const char* serde = "/home/me/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.200/src/de/mod.rs";
  const char* git = "/home/me/.cargo/git/checkouts/tokio-1a2b3c/abcdef0/tokio/src/lib.rs";
  EXPECT_FALSE(scope.file_in_scope(serde)) << "dependency crates are out of scope by default";
  EXPECT_FALSE(scope.file_in_scope(git));
  scope.source_patterns = {"%"};
  EXPECT_FALSE(scope.file_in_scope(serde)) << "the catch-all does not select dependencies";
  scope.source_patterns = {"%/serde-1.0.200/%"};
  EXPECT_TRUE(scope.file_in_scope(serde)) << "-s selects a crate";
  EXPECT_FALSE(scope.file_in_scope(git));
  EXPECT_FALSE(scope.file_in_scope("/home/me/app/src/main.rs"));
  scope.source_patterns = {"%/serde-1.0.200/%", "%/app/%"};
  EXPECT_TRUE(scope.file_in_scope("/home/me/app/src/main.rs"));
  scope.source_patterns = {"%/.cargo/registry/%", "!%/de/%"};
  EXPECT_FALSE(scope.file_in_scope(serde)) << "an exclusion still wins";
  EXPECT_FALSE(scope.file_in_scope("/rustc/abc/library/std/src/io/mod.rs")) << "-s never selects the standard library";
}

TEST(Paths, TrailingComponentMatchAndNormalisation) {
  EXPECT_TRUE(path_matches("/src/app/main.c", "main.c"));
  EXPECT_TRUE(path_matches("/src/app/main.c", "app/main.c"));
  EXPECT_TRUE(path_matches("/src/app/main.c", "/src/app/main.c"));
  EXPECT_FALSE(path_matches("/src/app/main.c", "ain.c"));
  EXPECT_FALSE(path_matches("/src/app/main.c", "/app/main.c"));
  EXPECT_EQ(normalize_path("/a//b/./c/../d.h"), "/a/b/d.h");
  EXPECT_EQ(normalize_path("/../x.c"), "/x.c");
  EXPECT_EQ(normalize_path("./stdlib/./stdlib/msort.c"), "stdlib/stdlib/msort.c");
  EXPECT_EQ(normalize_path("../up/./x.c"), "../up/x.c");
  EXPECT_EQ(normalize_path("rel/../x.c"), "x.c");
}

}  // namespace
}  // namespace whatif::symbols
