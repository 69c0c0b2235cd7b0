// The SymbolMap: loaded objects (dl_iterate_phdr), their debug files, scopes, and lookups that
// route an address to the owning object's lazily built DwarfIndex. Profiler thread or tools only.
#include "symbols/symbol_map.h"

#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fmt/format.h>
#include <unordered_map>

#include "os/memory.h"
#include "symbols/dwarf_index.h"
#include "symbols/elf_file.h"
#include "symbols/function_index.h"
#include "symbols/interner.h"

namespace whatif::symbols {
namespace {

/// One object as dl_iterate_phdr reports it.
struct Mapped {
  std::string path;
  uintptr_t bias = 0;
  std::string build_id;
  bool is_main = false;
  std::vector<AddressRange> executable;
};

std::string self_exe() { return os::executable_path(); }

int collect(struct dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::vector<Mapped>*>(data);
  Mapped mapped;
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  if (name[0] == '\0') {
    // The main executable is the one entry without a name; any later nameless entry is unknown.
    bool have_main = std::any_of(out->begin(), out->end(), [](const Mapped& m) { return m.is_main; });
    if (have_main) return 0;
    mapped.path = self_exe();
    mapped.is_main = true;
  } else if (std::strchr(name, '/') == nullptr) {
    return 0;  // the vDSO (linux-vdso.so.1) has no file to read
  } else {
    mapped.path = name;
  }
  // dlpi_addr is the load bias (runtime = p_vaddr + bias) for PIE, non-PIE and shared objects alike.
  mapped.bias = info->dlpi_addr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + phdr.p_vaddr;
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) && phdr.p_memsz > 0) {
      mapped.executable.push_back({start, start + phdr.p_memsz});
    } else if (phdr.p_type == PT_NOTE && mapped.build_id.empty() && phdr.p_memsz > 0) {
      mapped.build_id = build_id_from_notes(reinterpret_cast<const uint8_t*>(start), phdr.p_memsz);
    }
  }
  if (!mapped.path.empty()) out->push_back(std::move(mapped));
  return 0;
}

std::string join_patterns(const std::vector<std::string>& patterns) {
  std::string out;
  for (const auto& p : patterns) out += (out.empty() ? "" : " ") + p;
  return "'" + out + "'";
}

std::string no_debug_info(const std::string& path) {
  return fmt::format("no debug info for {}: rebuild with -g, or install its debug symbols", path);
}

struct ExecRange {
  uintptr_t begin;
  uintptr_t end;
  std::size_t object;
};

class SymbolMapImpl final : public SymbolMap {
 public:
  SymbolMapImpl(Scope scope, DebugSearch search, bool in_process)
      : scope_(std::move(scope)), search_(std::move(search)), in_process_(in_process) {}

  /// Adds one object: reads its ELF facts, finds its DWARF, applies the scope. `strict` (a file
  /// named by the user) fails on an unreadable or non-ELF file or unreadable DWARF.
  Result<void> add(Mapped mapped, bool strict) {
    State state;
    LoadedObject& object = state.info;
    object.path = std::move(mapped.path);
    object.bias = mapped.bias;
    object.build_id = std::move(mapped.build_id);
    object.is_main = mapped.is_main;
    object.executable_ranges = std::move(mapped.executable);
    object.in_scope = scope_.object_in_scope(object);
    std::vector<std::string> notes;
    auto facts = read_elf_facts(object.path);
    if (facts.ok() && facts->is_relocatable && strict) {
      return Error{fmt::format("{} is a relocatable object file: give the linked executable or shared library",
                               object.path)};
    }
    if (facts.ok() && !object.build_id.empty() && !facts->build_id.empty() && facts->build_id != object.build_id) {
      // The file was replaced after it was loaded: its DWARF describes other code.
      warnings_.push_back(fmt::format("{} changed on disk after it was loaded (build-id {} in memory, {} on disk); "
                                      "its lines are not used: restart the program",
                                      object.path, object.build_id, facts->build_id));
      states_.push_back(std::move(state));
      states_.back().interned_path = interner_.intern(states_.back().info.path);
      return {};
    }
    if (facts.ok()) {
      if (object.build_id.empty()) object.build_id = facts->build_id;
      if (!in_process_) object.executable_ranges = facts->executable_segments;
      DebugFile debug = find_debug_file(object.path, *facts, search_, &notes);
      object.debug_file = debug.path;
      object.debug_source = debug.source;
      object.has_debug_info = debug.source != DebugSource::kNone;
    } else if (strict) {
      return Error{facts.error()};
    } else {
      notes.push_back(facts.error());
    }
    if (!object.has_debug_info && (object.in_scope || strict) && facts.ok()) {
      // Without line tables, profile it by function: its symbol tables, else its .eh_frame.
      auto functions = FunctionIndex::open(object.path, &interner_);
      state.functions_tried = true;
      if (functions) {
        state.functions = std::move(*functions);
        object.functions_from = state.functions->sources();
      } else {
        notes.push_back(functions.error());
      }
    }
    if (!object.has_debug_info) {
      std::string message = object.functions_from.empty()
                                ? no_debug_info(object.path)
                                : fmt::format("{}, to see lines; profiling its functions instead (named from its {})",
                                              no_debug_info(object.path), object.functions_from);
      for (const auto& note : notes) message += "; " + note;
      if (object.in_scope || strict) warnings_.push_back(std::move(message));
    } else if (object.in_scope) {
      for (auto& note : notes) warnings_.push_back(std::move(note));
    }
    state.interned_path = interner_.intern(object.path);
    states_.push_back(std::move(state));
    std::size_t index = states_.size() - 1;
    if (states_[index].info.in_scope && states_[index].info.has_debug_info) {
      auto opened = ensure_index(index);  // unit ranges up front for in-scope objects; no line tables
      if (!opened && strict) return Error{last_open_error_};
    }
    return {};
  }

  void finish_objects() {
    objects_.clear();
    exec_.clear();
    for (std::size_t i = 0; i < states_.size(); ++i) {
      objects_.push_back(states_[i].info);
      for (const auto& r : states_[i].info.executable_ranges) exec_.push_back({r.begin, r.end, i});
    }
    std::sort(exec_.begin(), exec_.end(), [](const ExecRange& a, const ExecRange& b) { return a.begin < b.begin; });
  }

  void check_scope_not_empty() {
    bool any = std::any_of(states_.begin(), states_.end(), [](const State& s) { return s.info.in_scope; });
    if (!any) {
      warnings_.push_back(fmt::format("empty scope: no loaded object matches the binary scope {}; "
                                      "use MAIN, a path pattern with '%' wildcards, or a library name",
                                      join_patterns(scope_.binary_patterns)));
    }
  }

  bool enumerate_and_add() {
    std::vector<Mapped> mapped;
    dl_iterate_phdr(collect, &mapped);
    bool changed = false;
    std::vector<State> old = std::move(states_);
    states_.clear();
    std::vector<bool> kept(old.size(), false);
    for (auto& m : mapped) {
      auto same = std::find_if(old.begin(), old.end(), [&](const State& s) {
        return s.info.path == m.path && s.info.bias == m.bias;
      });
      if (same != old.end() && !kept[static_cast<std::size_t>(same - old.begin())]) {
        kept[static_cast<std::size_t>(same - old.begin())] = true;
        states_.push_back(std::move(*same));
      } else {
        changed = true;
        (void)add(std::move(m), false);
      }
    }
    changed |= std::find(kept.begin(), kept.end(), false) != kept.end();
    finish_objects();
    return changed;
  }

  bool refresh() override {
    if (!in_process_) return false;
    return enumerate_and_add();
  }

  const std::vector<LoadedObject>& objects() const override { return objects_; }

  /// Index of the object whose executable ranges contain `address`, or SIZE_MAX.
  std::size_t object_index(uintptr_t address) const {
    auto it = std::upper_bound(exec_.begin(), exec_.end(), address,
                               [](uintptr_t a, const ExecRange& r) { return a < r.begin; });
    if (it != exec_.begin() && address < std::prev(it)->end) return std::prev(it)->object;
    return SIZE_MAX;
  }

  const LoadedObject* object_at(uintptr_t address) const override {
    std::size_t object = object_index(address);
    return object == SIZE_MAX ? nullptr : &objects_[object];
  }

  std::optional<AddressInfo> lookup(uintptr_t address) override {
    // A file: every address is a file address of the one object (which may lack segments).
    std::size_t object = !in_process_ && states_.size() == 1 ? 0 : object_index(address);
    if (object == SIZE_MAX) return std::nullopt;
    if (!ensure_index(object)) return function_at(object, address);
    State& state = states_[object];
    AddressInfo info;
    if (!state.index->lookup(address - state.info.bias, &info.frames)) return std::nullopt;
    info.object = state.interned_path;
    return info;
  }

  const SourceLine* first_in_scope(const AddressInfo& info) const override {
    auto object = std::find_if(states_.begin(), states_.end(),
                               [&](const State& s) { return s.info.path == info.object; });
    if (object == states_.end() || !object->info.in_scope) return nullptr;
    if (info.function.end > info.function.begin) return info.frames.empty() ? nullptr : &info.frames.front();
    for (const auto& frame : info.frames) {
      if (frame.line != 0 && file_in_scope_cached(frame.file)) return &frame;
    }
    return nullptr;
  }

  std::vector<AddressRange> ranges_for(std::string_view file, uint32_t line, bool in_scope_only = false) override {
    std::vector<AddressRange> out;
    // In-scope objects first; the rest only when those have no such line and the caller allows it.
    for (int pass = 0; pass < (in_scope_only ? 1 : 2) && out.empty(); ++pass) {
      for (std::size_t i = 0; i < states_.size(); ++i) {
        if (states_[i].info.in_scope != (pass == 0) || !ensure_index(i)) continue;
        std::size_t first = out.size();
        states_[i].index->ranges_for(file, line, &out);
        for (std::size_t k = first; k < out.size(); ++k) {
          out[k].begin += states_[i].info.bias;
          out[k].end += states_[i].info.bias;
        }
      }
    }
    std::sort(out.begin(), out.end(), [](const AddressRange& a, const AddressRange& b) { return a.begin < b.begin; });
    std::vector<AddressRange> merged;
    for (const auto& r : out) {
      if (!merged.empty() && r.begin <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, r.end);
      } else {
        merged.push_back(r);
      }
    }
    return merged;
  }

  std::vector<std::string> in_scope_files() override {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (!states_[i].info.in_scope || !ensure_index(i)) continue;
      for (auto file : states_[i].index->files_with_code()) {
        if (scope_.file_in_scope(file)) out.emplace_back(file);
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (out.empty()) {
      warnings_.push_back(fmt::format("empty scope: no source file of the in-scope objects matches the source scope {} "
                                      "(system headers are always excluded)",
                                      join_patterns(scope_.source_patterns)));
    }
    return out;
  }

  DebugSummary summarize(const LoadedObject& object) override {
    DebugSummary summary;
    summary.object = object.path;
    summary.debug_file = object.debug_file;
    summary.debug_source = object.debug_source;
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (states_[i].info.path != object.path || states_[i].info.bias != object.bias) continue;
      if (ensure_index(i)) {
        states_[i].index->summarize(&summary);
      } else {
        summary.warnings.push_back(states_[i].info.has_debug_info ? last_open_error_ : no_debug_info(object.path));
      }
      break;
    }
    return summary;
  }

  std::vector<std::string> take_warnings() override { return std::exchange(warnings_, {}); }

 private:
  struct State {
    LoadedObject info;
    std::string_view interned_path;  // info.path, interned: AddressInfo::object points here
    std::unique_ptr<DwarfIndex> index;
    bool open_tried = false;
    std::unique_ptr<FunctionIndex> functions;  // objects without debug info
    bool functions_tried = false;
  };

  /// The function holding `address` in object `i`, which has no line tables (nullopt without one).
  std::optional<AddressInfo> function_at(std::size_t i, uintptr_t address) {
    State& state = states_[i];
    if (!state.functions && !state.functions_tried) {
      state.functions_tried = true;
      if (auto functions = FunctionIndex::open(state.info.path, &interner_)) {
        state.functions = std::move(*functions);
        state.info.functions_from = state.functions->sources();
      }
    }
    if (!state.functions) return std::nullopt;
    const FunctionBounds* function = state.functions->find(address - state.info.bias);
    if (function == nullptr) return std::nullopt;
    AddressInfo info;
    info.frames.push_back({function->name, 0, function->name});
    info.object = state.interned_path;
    info.function = {function->begin + state.info.bias, function->end + state.info.bias};
    return info;
  }

  /// Opens the object's DWARF on first need; false when it has none or it cannot be read.
  bool ensure_index(std::size_t i) {
    State& state = states_[i];
    if (state.index) return true;
    if (state.open_tried || !state.info.has_debug_info) return false;
    state.open_tried = true;
    auto opened = DwarfIndex::open(state.info.debug_file, state.info.path, &interner_, &warnings_);
    if (!opened.ok()) {
      last_open_error_ = opened.error();
      warnings_.push_back(opened.error());
      return false;
    }
    state.index = std::move(opened.value());
    return true;
  }

  bool file_in_scope_cached(std::string_view file) const {
    auto [it, inserted] = file_scope_.try_emplace(file.data(), false);
    if (inserted) it->second = scope_.file_in_scope(file);
    return it->second;
  }

  Scope scope_;
  DebugSearch search_;
  bool in_process_;
  Interner interner_;
  std::vector<State> states_;
  std::vector<LoadedObject> objects_;
  std::vector<ExecRange> exec_;  // sorted by begin
  std::vector<std::string> warnings_;
  std::string last_open_error_;
  // Interned file names have stable data pointers, so the pointer identifies the file.
  mutable std::unordered_map<const char*, bool> file_scope_;
};

}  // namespace

Result<std::unique_ptr<SymbolMap>> SymbolMap::for_current_process(Scope scope, DebugSearch search) {
  auto map = std::make_unique<SymbolMapImpl>(std::move(scope), std::move(search), true);
  map->enumerate_and_add();
  if (map->objects().empty()) return Error{"no loaded objects found by dl_iterate_phdr"};
  map->check_scope_not_empty();
  return std::unique_ptr<SymbolMap>(std::move(map));
}

Result<std::unique_ptr<SymbolMap>> SymbolMap::for_file(const std::string& path, Scope scope, DebugSearch search) {
  auto map = std::make_unique<SymbolMapImpl>(std::move(scope), std::move(search), false);
  Mapped mapped;
  mapped.path = path;
  mapped.is_main = true;
  auto added = map->add(std::move(mapped), true);
  if (!added.ok()) return Error{added.error()};
  map->finish_objects();
  map->check_scope_not_empty();
  return std::unique_ptr<SymbolMap>(std::move(map));
}

}  // namespace whatif::symbols
