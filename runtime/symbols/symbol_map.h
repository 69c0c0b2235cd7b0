// The symbol layer's interface: loaded objects, scopes, and the address <-> source-line map built
// lazily from DWARF line tables. Not thread-safe: the runtime uses one SymbolMap on the profiler
// thread only; the launcher uses it single-threaded. Never used in signal handlers.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace whatif::symbols {

/// One source position. Strings are interned by the SymbolMap and stay valid for its lifetime.
struct SourceLine {
  std::string_view file;      ///< as the compiler recorded it, absolute when DWARF gives a directory
  uint32_t line = 0;
  std::string_view function;  ///< enclosing (or inlined) function's name; may be empty
};

/// [begin, end) in the addresses the map was built for (runtime addresses in-process).
struct AddressRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
};

/// What one address maps to. frames[0] is the innermost line (inside inlined code, the inlined
/// line); frames[i + 1] is the call site that inlined frames[i]. Never empty when returned.
struct AddressInfo {
  std::vector<SourceLine> frames;
  std::string_view object;  ///< path of the object containing the address
  /// In an object without debug info: the bounds of the function holding the address (runtime
  /// addresses), and frames holds one entry, {file = function name, line = 0, function = name}.
  /// Empty (begin == end) for a line from DWARF.
  AddressRange function;
};

/// Where a DWARF file was found for an object (see docs/symbols.md for the search order).
enum class DebugSource { kNone, kEmbedded, kBuildId, kDebugLink };
std::string_view to_string(DebugSource source);

struct LoadedObject {
  std::string path;
  uintptr_t bias = 0;              ///< load bias: runtime address = file virtual address + bias
  std::string build_id;            ///< hex, empty when the object has none
  std::string debug_file;          ///< where DWARF came from: the object, build-id or debuglink file
  DebugSource debug_source = DebugSource::kNone;
  bool is_main = false;            ///< the main executable
  bool in_scope = false;           ///< chosen by the binary scope
  bool has_debug_info = false;
  /// Without debug info: where its function names come from (".symtab", ".dynsym", ".eh_frame"),
  /// empty when it has none. Such an object is profiled by function instead of by line.
  std::string functions_from;
  std::vector<AddressRange> executable_ranges;  ///< runtime ranges of PT_LOAD segments with PF_X
};

/// Which objects and source files experiments may choose.
/// Patterns use '%' as a wildcard matching any run of characters; a pattern starting with '!'
/// excludes. The binary pattern "MAIN" means the main executable, "OWN" the program's own shared
/// libraries: those loaded from outside the system's library directories (system_library_dirs),
/// whatif's runtime excepted.
struct Scope {
  std::vector<std::string> binary_patterns = {"MAIN", "OWN"};
  std::vector<std::string> source_patterns = {"%"};
  /// Out of scope whatever the patterns say: system and standard-library headers and sources.
  /// Rust's standard library is compiled with its sources remapped to /rustc/<commit hash>/.
  std::vector<std::string> system_prefixes = {"/usr/include/", "/usr/lib/", "/usr/local/include/",
                                              "/usr/src/", "<built-in>", "/rustc/"};
  /// Dependencies (Rust crates from a registry or git): out of scope unless a source pattern other
  /// than the catch-all "%" selects them (-s %/serde-1.0%/%).
  std::vector<std::string> dependency_patterns = {"%/.cargo/registry/%", "%/.cargo/git/%"};
  /// Where installed libraries live: an object loaded from under one is not the program's "OWN".
  std::vector<std::string> system_library_dirs = {"/lib/",     "/lib32/",     "/lib64/",       "/libx32/",
                                                  "/usr/lib/", "/usr/lib32/", "/usr/lib64/",   "/usr/libx32/",
                                                  "/usr/libexec/", "/usr/local/lib/", "/usr/local/lib64/"};
  /// The path whatif's runtime (libwhatif.so) was loaded from: never "OWN" (empty: unknown).
  std::string runtime_path;
  bool object_in_scope(const LoadedObject& object) const;
  /// A shared library of the program's own ("OWN"): loaded from outside system_library_dirs.
  bool own_library(const LoadedObject& object) const;
  bool file_in_scope(std::string_view file) const;
};

/// Where to look for separate debug files, besides the object's own directory.
struct DebugSearch {
  /// Tried before the system directory, in order. Also extended by $WHATIF_DEBUG_DIRS (':'-separated).
  std::vector<std::string> extra_dirs;
  std::string system_dir = "/usr/lib/debug";
  /// extra_dirs, then $WHATIF_DEBUG_DIRS, then system_dir.
  std::vector<std::string> dirs() const;
};

/// '%'-wildcard match of a whole string (exposed for tests).
bool wildcard_match(std::string_view pattern, std::string_view text);

/// Summary of one object's DWARF, for `whatif lines OBJECT`.
struct DebugSummary {
  std::string object;
  std::string debug_file;
  DebugSource debug_source = DebugSource::kNone;
  std::size_t compilation_units = 0;
  std::size_t files = 0;
  std::size_t line_rows = 0;
  std::vector<int> dwarf_versions;  ///< distinct, sorted
  std::vector<std::string> warnings;
};

class SymbolMap {
 public:
  /// The objects loaded in this process (dl_iterate_phdr), with their load biases. Only reads ELF
  /// headers and DWARF unit ranges up front; line tables are parsed on first lookup.
  static Result<std::unique_ptr<SymbolMap>> for_current_process(Scope scope, DebugSearch search = {});
  /// One ELF file on disk, mapped at bias 0 (file addresses), treated as the main object. Used by
  /// `whatif lines`, `whatif run` and tests. Fails when the file is unreadable or not ELF; without
  /// debug info it succeeds with has_debug_info false and a "no debug info for ..." warning.
  static Result<std::unique_ptr<SymbolMap>> for_file(const std::string& path, Scope scope = {},
                                                     DebugSearch search = {});

  virtual ~SymbolMap() = default;

  /// Re-enumerates loaded objects after dlopen/dlclose; returns true if the set changed.
  virtual bool refresh() = 0;
  virtual const std::vector<LoadedObject>& objects() const = 0;

  /// The object whose executable segments contain `address`, or nullptr. Cheap (no DWARF): lets
  /// callers skip lookups in out-of-scope objects, whose DWARF is otherwise indexed on first use.
  virtual const LoadedObject* object_at(uintptr_t address) const = 0;

  /// Maps an address to its line (and inline call sites). nullopt when no line table covers it.
  /// In an object without debug info, maps it to its function (AddressInfo::function).
  virtual std::optional<AddressInfo> lookup(uintptr_t address) = 0;

  /// The first frame of `info` (innermost first) whose object and file are in scope, or nullptr.
  virtual const SourceLine* first_in_scope(const AddressInfo& info) const = 0;

  /// Address ranges whose line-table rows say FILE:LINE. `file` matches a path by whole trailing
  /// components ("main.c" matches "/src/app/main.c", "app/main.c" too, "ain.c" does not).
  /// With `in_scope_only`, objects outside the binary scope are not searched (their DWARF is
  /// never parsed): the runtime's choice, since a miss would otherwise read every library's DWARF.
  virtual std::vector<AddressRange> ranges_for(std::string_view file, uint32_t line, bool in_scope_only = false) = 0;

  /// Source files of in-scope objects that the scope admits (forces parsing of their line tables).
  virtual std::vector<std::string> in_scope_files() = 0;

  /// Full summary of one loaded object's DWARF (forces parsing all its line tables).
  virtual DebugSummary summarize(const LoadedObject& object) = 0;

  /// Warnings gathered so far (no debug info, malformed unit skipped, empty scope), each naming
  /// the object; cleared by the call.
  virtual std::vector<std::string> take_warnings() = 0;
};

}  // namespace whatif::symbols
