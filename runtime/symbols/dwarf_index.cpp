// libdwarf-backed unit index, lazy line tables and inline-scope trees for one object.
// Runs on the profiler thread or in single-threaded tools; never in signal handlers.
#include "symbols/dwarf_index.h"

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "symbols/elf_dwarf_access.h"

namespace whatif::symbols {
namespace {

constexpr int kMaxDieDepth = 128;         // deeper DIE nesting is treated as malformed
constexpr int kMaxOriginHops = 8;         // abstract_origin/specification chains followed for names
constexpr std::size_t kMaxWarnings = 20;  // per object; later ones are counted, not kept
constexpr int kMaxNeutralizedUnits = 64;  // malformed units stepped over before giving up
constexpr uint32_t kNone = UINT32_MAX;

/// Addresses that linkers use for code from discarded sections (COMDAT, --gc-sections).
bool is_tombstone(uint64_t address) { return address == 0 || address >= UINT64_MAX - 1 || address == UINT32_MAX; }

struct Range {
  uint64_t begin;
  uint64_t end;
};

struct LineRow {
  uint64_t begin;
  uint64_t end;
  uint32_t file;  // index into Unit::files
  uint32_t line;
};

/// A function body or an inlined call, with the ranges it covers.
struct ScopeNode {
  std::vector<Range> ranges;
  std::vector<uint32_t> children;
  std::string_view name;
  std::string_view call_file;  // inlined calls only: where the call was
  uint32_t call_line = 0;
  bool contains(uint64_t address) const {
    for (const auto& r : ranges)
      if (address >= r.begin && address < r.end) return true;
    return false;
  }
};

struct TopRange {
  uint64_t begin;
  uint64_t end;
  uint32_t node;
};

struct Unit {
  Dwarf_Off die_offset = 0;
  Dwarf_Off header_offset = 0;
  uint16_t version = 0;
  std::string_view name;
  bool files_read = false;     // files (the line table's header)
  bool lines_parsed = false;   // files and rows
  bool scopes_parsed = false;  // functions and inline call sites (their call files index `files`)
  bool failed = false;
  uint64_t base = 0;  // DW_AT_low_pc: base of DWARF 2-4 range lists
  uint32_t file_base = 1;  // line-table file numbers start at 0 in DWARF 5, 1 before
  std::vector<std::string_view> files;
  std::vector<LineRow> rows;  // sorted by begin
  std::size_t raw_rows = 0;
  std::vector<ScopeNode> nodes;
  std::vector<TopRange> functions;  // sorted by begin

  std::string_view file_at(uint64_t number) const {
    if (number < file_base) return {};
    uint64_t index = number - file_base;
    return index < files.size() ? files[index] : std::string_view{};
  }
};

struct UnitRange {
  uint64_t begin;
  uint64_t end;
  uint32_t unit;
};

}  // namespace

std::string normalize_path(std::string_view path) {
  if (path.empty()) return {};
  const bool absolute = path[0] == '/';
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  while (at < path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(at, slash - at);
    at = slash + 1;
    if (part.empty() || part == ".") continue;
    if (part == ".." && !parts.empty() && parts.back() != "..") {
      parts.pop_back();
    } else if (part != ".." || !absolute) {
      parts.push_back(part);  // a relative path keeps its leading ".."
    }
  }
  std::string out;
  for (auto part : parts) {
    if (absolute || !out.empty()) out += '/';
    out += part;
  }
  if (out.empty()) return absolute ? "/" : ".";
  return out;
}

bool path_matches(std::string_view path, std::string_view query) {
  if (query.empty()) return false;
  if (query[0] == '/') return path == query;
  if (path.size() < query.size() || path.substr(path.size() - query.size()) != query) return false;
  return path.size() == query.size() || path[path.size() - query.size() - 1] == '/';
}

struct DwarfIndex::Impl {
  std::unique_ptr<ElfDwarfAccess> access;
  Dwarf_Debug dbg = nullptr;
  std::string object;
  std::string debug_file;
  Interner* interner = nullptr;
  std::vector<std::string>* sink = nullptr;
  std::vector<std::string> warnings;  // this object's, for summaries
  std::size_t dropped_warnings = 0;
  std::vector<Unit> units;
  std::vector<UnitRange> unit_ranges;  // sorted by begin
  std::unordered_map<Dwarf_Off, std::string_view> names;  // DIE offset -> function name
  // Subprogram DIE offset -> enclosing C++ scopes ("ns::Class::"), recorded while walking units.
  std::unordered_map<Dwarf_Off, std::string_view> scope_prefix;
  std::vector<uint32_t> chain_;  // scratch for build_frames

  ~Impl() { close_dwarf(); }

  void close_dwarf() {
    if (dbg) {
      Dwarf_Error error = nullptr;
      dwarf_finish(dbg, &error);
      dbg = nullptr;
    }
  }

  void warn(std::string message) {
    if (std::find(warnings.begin(), warnings.end(), message) != warnings.end()) return;  // re-indexing
    if (warnings.size() >= kMaxWarnings) {
      ++dropped_warnings;
      return;
    }
    warnings.push_back(message);
    if (sink) sink->push_back(std::move(message));
  }

  std::string take_error(Dwarf_Error& error) {
    std::string message = error ? dwarf_errmsg(error) : "unknown libdwarf error";
    if (error) dwarf_dealloc_error(dbg, error);
    error = nullptr;
    // libdwarf messages sometimes end in spaces or newlines.
    while (!message.empty() && (message.back() == ' ' || message.back() == '\n')) message.pop_back();
    return message;
  }

  std::string unit_label(const Unit& unit) const {
    return fmt::format("compilation unit {}at .debug_info offset {:#x}",
                       unit.name.empty() ? "" : fmt::format("'{}' ", unit.name), unit.header_offset);
  }

  // ---- DIE helpers -------------------------------------------------------------------------

  bool attr_udata(Dwarf_Die die, Dwarf_Half name, Dwarf_Unsigned* value) {
    Dwarf_Attribute attr = nullptr;
    Dwarf_Error error = nullptr;
    int res = dwarf_attr(die, name, &attr, &error);
    if (res != DW_DLV_OK) {
      if (res == DW_DLV_ERROR) take_error(error);
      return false;
    }
    res = dwarf_formudata(attr, value, &error);
    if (res == DW_DLV_ERROR) {
      take_error(error);
      // DW_FORM_implicit_const (GCC's DWARF 5 call_file/call_line) is signed data to libdwarf.
      Dwarf_Signed signed_value = 0;
      res = dwarf_formsdata(attr, &signed_value, &error);
      if (res == DW_DLV_ERROR) take_error(error);
      if (res == DW_DLV_OK && signed_value < 0) res = DW_DLV_NO_ENTRY;
      if (res == DW_DLV_OK) *value = static_cast<Dwarf_Unsigned>(signed_value);
    }
    dwarf_dealloc_attribute(attr);
    return res == DW_DLV_OK;
  }

  /// Whether the unit's DW_AT_producer is GCC or GNU as ("GNU C17 12.2.0 ...", "GNU AS 2.40").
  bool produced_by_gnu(Dwarf_Die unit_die) {
    Dwarf_Attribute attr = nullptr;
    Dwarf_Error error = nullptr;
    int res = dwarf_attr(unit_die, DW_AT_producer, &attr, &error);
    if (res != DW_DLV_OK) {
      if (res == DW_DLV_ERROR) take_error(error);
      return false;
    }
    char* text = nullptr;
    res = dwarf_formstring(attr, &text, &error);
    if (res == DW_DLV_ERROR) take_error(error);
    const bool gnu = res == DW_DLV_OK && text != nullptr && std::string_view(text).starts_with("GNU ");
    dwarf_dealloc_attribute(attr);
    return gnu;
  }

  bool attr_ref(Dwarf_Die die, Dwarf_Half name, Dwarf_Off* offset) {
    Dwarf_Attribute attr = nullptr;
    Dwarf_Error error = nullptr;
    int res = dwarf_attr(die, name, &attr, &error);
    if (res != DW_DLV_OK) {
      if (res == DW_DLV_ERROR) take_error(error);
      return false;
    }
    res = dwarf_global_formref(attr, offset, &error);
    if (res == DW_DLV_ERROR) take_error(error);
    dwarf_dealloc_attribute(attr);
    return res == DW_DLV_OK;
  }

  std::string_view name_of(Dwarf_Die die, int hops = 0) {
    Dwarf_Off offset = 0;
    Dwarf_Error error = nullptr;
    if (dwarf_dieoffset(die, &offset, &error) != DW_DLV_OK) {
      take_error(error);
      return {};
    }
    if (auto it = names.find(offset); it != names.end()) return it->second;
    std::string_view result;
    char* raw = nullptr;
    int res = dwarf_diename(die, &raw, &error);
    if (res == DW_DLV_OK && raw) {
      auto prefix = scope_prefix.find(offset);
      result = prefix == scope_prefix.end() ? interner->intern(raw)
                                            : interner->intern(std::string(prefix->second) + raw);
    } else {
      if (res == DW_DLV_ERROR) take_error(error);
      for (Dwarf_Half attr : {Dwarf_Half{DW_AT_abstract_origin}, Dwarf_Half{DW_AT_specification}}) {
        Dwarf_Off target = 0;
        if (hops >= kMaxOriginHops || !attr_ref(die, attr, &target) || target == offset) continue;
        Dwarf_Die origin = nullptr;
        if (dwarf_offdie_b(dbg, target, true, &origin, &error) != DW_DLV_OK) {
          take_error(error);
          continue;
        }
        result = name_of(origin, hops + 1);
        dwarf_dealloc_die(origin);
        if (!result.empty()) break;
      }
    }
    names.emplace(offset, result);
    return result;
  }

  /// The address ranges of a DIE (low/high pc, or DW_AT_ranges in DWARF 2-4 or 5 form).
  std::vector<Range> ranges_of(Dwarf_Die die, const Unit& unit) {
    std::vector<Range> out;
    Dwarf_Error error = nullptr;
    Dwarf_Addr low = 0;
    int res = dwarf_lowpc(die, &low, &error);
    if (res == DW_DLV_ERROR) take_error(error);
    if (res == DW_DLV_OK) {
      Dwarf_Addr high = 0;
      Dwarf_Half form = 0;
      enum Dwarf_Form_Class form_class = DW_FORM_CLASS_UNKNOWN;
      res = dwarf_highpc_b(die, &high, &form, &form_class, &error);
      if (res == DW_DLV_ERROR) take_error(error);
      if (res == DW_DLV_OK) {
        if (form_class == DW_FORM_CLASS_CONSTANT) high += low;
        if (high > low && !is_tombstone(low)) out.push_back({low, high});
        return out;
      }
    }
    Dwarf_Attribute attr = nullptr;
    res = dwarf_attr(die, DW_AT_ranges, &attr, &error);
    if (res != DW_DLV_OK) {
      if (res == DW_DLV_ERROR) take_error(error);
      return out;
    }
    Dwarf_Half form = 0;
    Dwarf_Unsigned value = 0;
    if (dwarf_whatform(attr, &form, &error) != DW_DLV_OK) {
      take_error(error);
      dwarf_dealloc_attribute(attr);
      return out;
    }
    if (form == DW_FORM_rnglistx) {
      res = dwarf_formudata(attr, &value, &error);
    } else {
      Dwarf_Off offset = 0;
      res = dwarf_global_formref(attr, &offset, &error);
      if (res == DW_DLV_ERROR) {
        take_error(error);
        res = dwarf_formudata(attr, &value, &error);  // DWARF 2/3 data4/data8 offsets
      } else {
        value = offset;
      }
    }
    if (res == DW_DLV_ERROR) take_error(error);
    if (res == DW_DLV_OK) {
      if (unit.version >= 5) {
        Dwarf_Rnglists_Head head = nullptr;
        Dwarf_Unsigned count = 0, global_offset = 0;
        res = dwarf_rnglists_get_rle_head(attr, form, value, &head, &count, &global_offset, &error);
        if (res == DW_DLV_ERROR) take_error(error);
        if (res == DW_DLV_OK) {
          for (Dwarf_Unsigned i = 0; i < count; ++i) {
            unsigned length = 0, code = 0;
            Dwarf_Unsigned raw1 = 0, raw2 = 0, cooked1 = 0, cooked2 = 0;
            Dwarf_Bool unavailable = false;
            res = dwarf_get_rnglists_entry_fields_a(head, i, &length, &code, &raw1, &raw2, &unavailable, &cooked1,
                                                    &cooked2, &error);
            if (res == DW_DLV_ERROR) {
              take_error(error);
              break;
            }
            if (res != DW_DLV_OK || unavailable) continue;
            bool is_range = code == DW_RLE_offset_pair || code == DW_RLE_start_end || code == DW_RLE_start_length ||
                            code == DW_RLE_startx_endx || code == DW_RLE_startx_length;
            if (is_range && cooked2 > cooked1 && !is_tombstone(cooked1)) out.push_back({cooked1, cooked2});
          }
          dwarf_dealloc_rnglists_head(head);
        }
      } else {
        Dwarf_Ranges* list = nullptr;
        Dwarf_Signed count = 0;
        Dwarf_Unsigned bytes = 0;
        Dwarf_Off real_offset = 0;
        res = dwarf_get_ranges_b(dbg, value, die, &real_offset, &list, &count, &bytes, &error);
        if (res == DW_DLV_ERROR) take_error(error);
        if (res == DW_DLV_OK) {
          uint64_t base = unit.base;
          for (Dwarf_Signed i = 0; i < count; ++i) {
            const Dwarf_Ranges& entry = list[i];
            if (entry.dwr_type == DW_RANGES_END) break;
            if (entry.dwr_type == DW_RANGES_ADDRESS_SELECTION) {
              base = entry.dwr_addr2;
              continue;
            }
            uint64_t begin = base + entry.dwr_addr1, end = base + entry.dwr_addr2;
            if (end > begin && !is_tombstone(begin)) out.push_back({begin, end});
          }
          dwarf_ranges_dealloc(dbg, list, count);
        }
      }
    }
    dwarf_dealloc_attribute(attr);
    return out;
  }

  // ---- opening and the unit index ----------------------------------------------------------

  struct UnitFailure {
    bool failed = false;
    uint64_t offset = 0;
    std::string message;
  };

  /// Opens libdwarf on `access` and indexes units, stepping over malformed unit headers by
  /// neutralising them and starting again.
  Result<void> open_and_index() {
    for (int attempt = 0;; ++attempt) {
      Dwarf_Error error = nullptr;
      int res = dwarf_object_init_b(access->interface(), nullptr, nullptr, DW_GROUPNUMBER_ANY, &dbg, &error);
      if (res != DW_DLV_OK) {
        std::string why = res == DW_DLV_ERROR ? take_error(error) : "no DWARF sections";
        dbg = nullptr;
        return Error{fmt::format("cannot read DWARF of {} from {}: {}", object, debug_file, why)};
      }
      UnitFailure failure = index_units();
      if (!failure.failed) return {};
      if (attempt < kMaxNeutralizedUnits) {
        close_dwarf();  // libdwarf must not hold section data while it changes
        if (access->neutralize_info_unit(failure.offset)) {
          warn(fmt::format("malformed DWARF unit at .debug_info offset {:#x} in {} skipped: {}", failure.offset,
                           debug_file, failure.message));
          units.clear();
          unit_ranges.clear();
          names.clear();
          scope_prefix.clear();
          continue;
        }
        // Reopen unchanged to keep the units before the bad one.
        res = dwarf_object_init_b(access->interface(), nullptr, nullptr, DW_GROUPNUMBER_ANY, &dbg, &error);
        if (res != DW_DLV_OK) {
          if (res == DW_DLV_ERROR) take_error(error);
          dbg = nullptr;
          return Error{fmt::format("cannot read DWARF of {} from {}", object, debug_file)};
        }
        units.clear();
        unit_ranges.clear();
        names.clear();
        index_units();
      }
      warn(fmt::format("malformed DWARF unit at .debug_info offset {:#x} in {} skipped, with the units after it: {}",
                       failure.offset, debug_file, failure.message));
      return {};
    }
  }

  UnitFailure index_units() {
    UnitFailure failure;
    Dwarf_Error error = nullptr;
    // .debug_aranges first: unit DIE offsets it covers need no DIE range reading.
    std::unordered_map<Dwarf_Off, std::vector<Range>> aranges;
    Dwarf_Arange* list = nullptr;
    Dwarf_Signed count = 0;
    int res = dwarf_get_aranges(dbg, &list, &count, &error);
    if (res == DW_DLV_ERROR) {
      warn(fmt::format("ignoring unreadable .debug_aranges in {}: {}", debug_file, take_error(error)));
    } else if (res == DW_DLV_OK) {
      for (Dwarf_Signed i = 0; i < count; ++i) {
        Dwarf_Unsigned segment = 0, segment_size = 0, length = 0;
        Dwarf_Addr start = 0;
        Dwarf_Off die_offset = 0;
        if (dwarf_get_arange_info_b(list[i], &segment, &segment_size, &start, &length, &die_offset, &error) ==
            DW_DLV_OK) {
          auto& ranges = aranges[die_offset];
          if (length > 0 && !is_tombstone(start)) ranges.push_back({start, start + length});
        } else if (error) {
          take_error(error);
        }
        dwarf_dealloc(dbg, list[i], DW_DLA_ARANGE);
      }
      dwarf_dealloc(dbg, list, DW_DLA_LIST);
    }

    Dwarf_Unsigned header_offset = 0;
    for (;;) {
      Dwarf_Unsigned length = 0, type_offset = 0, next = 0;
      Dwarf_Half version = 0, address_size = 0, length_size = 0, extension_size = 0, unit_type = 0;
      Dwarf_Off abbrev_offset = 0;
      Dwarf_Sig8 signature;
      res = dwarf_next_cu_header_d(dbg, true, &length, &version, &abbrev_offset, &address_size, &length_size,
                                   &extension_size, &signature, &type_offset, &next, &unit_type, &error);
      if (res == DW_DLV_NO_ENTRY) break;
      if (res == DW_DLV_ERROR) {
        // libdwarf cannot step past a unit it rejects; the caller neutralises it and reopens.
        failure = UnitFailure{true, header_offset, take_error(error)};
        break;
      }
      Unit unit;
      unit.header_offset = header_offset;
      unit.version = version;
      header_offset = next;
      Dwarf_Die die = nullptr;
      res = dwarf_siblingof_b(dbg, nullptr, true, &die, &error);
      if (res == DW_DLV_NO_ENTRY && access->neutralized().count(unit.header_offset)) continue;
      if (res != DW_DLV_OK) {
        warn(fmt::format("malformed DWARF unit at .debug_info offset {:#x} in {} skipped: {}", unit.header_offset,
                         debug_file, res == DW_DLV_ERROR ? take_error(error) : "no unit DIE"));
        continue;
      }
      Dwarf_Half tag = 0;
      if (dwarf_tag(die, &tag, &error) != DW_DLV_OK) take_error(error);
      if (tag == DW_TAG_skeleton_unit) {
        warn(fmt::format("{} uses split DWARF (.dwo files), which is not supported; rebuild without -gsplit-dwarf",
                         debug_file));
      }
      if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit) {
        dwarf_dealloc_die(die);
        continue;
      }
      if (dwarf_dieoffset(die, &unit.die_offset, &error) != DW_DLV_OK) take_error(error);
      char* name = nullptr;
      res = dwarf_diename(die, &name, &error);
      if (res == DW_DLV_OK && name) unit.name = interner->intern(name);
      if (res == DW_DLV_ERROR) take_error(error);
      Dwarf_Addr low = 0;
      res = dwarf_lowpc(die, &low, &error);
      if (res == DW_DLV_OK) unit.base = low;
      if (res == DW_DLV_ERROR) take_error(error);
      auto index = static_cast<uint32_t>(units.size());
      auto covered = aranges.find(unit.die_offset);
      if (covered != aranges.end() && !covered->second.empty()) {
        for (const auto& r : covered->second) unit_ranges.push_back({r.begin, r.end, index});
      } else {
        for (const auto& r : ranges_of(die, unit)) unit_ranges.push_back({r.begin, r.end, index});
      }
      dwarf_dealloc_die(die);
      units.push_back(unit);
    }
    std::sort(unit_ranges.begin(), unit_ranges.end(),
              [](const UnitRange& a, const UnitRange& b) { return a.begin < b.begin; });
    return failure;
  }

  // ---- per-unit parsing ----------------------------------------------------------------------

  /// The unit's files and line rows, and with `scopes` its functions and inline call sites. A
  /// line's address ranges need only the rows: walking every unit's DIEs for them (the standard
  /// library's units in a Rust binary) held a Rust program's first experiment back 0.6-0.8 s.
  void parse_unit(Unit& unit, bool scopes = true) {
    if (unit.lines_parsed && (unit.scopes_parsed || !scopes)) return;
    Dwarf_Error error = nullptr;
    Dwarf_Die die = nullptr;
    int res = dwarf_offdie_b(dbg, unit.die_offset, true, &die, &error);
    if (res != DW_DLV_OK) {
      unit.failed = true;
      unit.lines_parsed = unit.scopes_parsed = true;
      warn(fmt::format("malformed {} in {} skipped: {}", unit_label(unit), debug_file,
                       res == DW_DLV_ERROR ? take_error(error) : "no unit DIE"));
      return;
    }
    if (!unit.lines_parsed) {
      unit.lines_parsed = true;
      parse_lines(unit, die);
    }
    if (scopes && !unit.scopes_parsed) {
      unit.scopes_parsed = true;
      if (!unit.failed) parse_scopes(unit, die);
    }
    dwarf_dealloc_die(die);
  }

  void parse_lines(Unit& unit, Dwarf_Die die) {
    Dwarf_Error error = nullptr;
    Dwarf_Unsigned line_version = 0;
    Dwarf_Small table_count = 0;
    Dwarf_Line_Context context = nullptr;
    int res = dwarf_srclines_b(die, &line_version, &table_count, &context, &error);
    if (res == DW_DLV_NO_ENTRY) return;  // a unit without code
    if (res == DW_DLV_ERROR) {
      unit.failed = true;
      warn(fmt::format("malformed line table of {} in {} skipped: {}", unit_label(unit), debug_file, take_error(error)));
      return;
    }
    unit.file_base = line_version >= 5 ? 0 : 1;
    read_files(unit, die);
    // DWARF 5 starts each sequence's file register at 1, as earlier versions do; libdwarf 20210528
    // (Debian 12's) starts it at 0, so rows before the sequence's first DW_LNS_set_file come back
    // as file 0, the unit's primary file. GCC opens a unit with a duplicate of it as file 1 unless
    // the unit's first function comes from a header: that function's lines were the .c file's
    // (a header's hot loop at hot.h:4 reported as main.c:4, `-p hot.h:4` matching nothing). GCC
    // and GNU as never name file 0 in a row themselves, so for their units a 0 is the register's
    // initial 1. (LLVM's units do name file 0: for them a 0 stays ambiguous, and is kept.)
    const bool zero_means_one = line_version >= 5 && produced_by_gnu(die);

    Dwarf_Line* lines = nullptr;
    Dwarf_Signed count = 0;
    res = table_count == 0 ? DW_DLV_NO_ENTRY : dwarf_srclines_from_linecontext(context, &lines, &count, &error);
    if (res == DW_DLV_ERROR) {
      unit.failed = true;
      warn(fmt::format("malformed line table of {} in {} skipped: {}", unit_label(unit), debug_file, take_error(error)));
    }
    if (res == DW_DLV_OK) {
      unit.raw_rows = static_cast<std::size_t>(count);
      bool pending = false, skip_sequence = false, sequence_start = true;
      LineRow row{};
      for (Dwarf_Signed i = 0; i < count; ++i) {
        Dwarf_Addr address = 0;
        Dwarf_Unsigned line = 0, file = 0;
        Dwarf_Bool end_sequence = false;
        if (dwarf_lineaddr(lines[i], &address, &error) != DW_DLV_OK ||
            dwarf_lineno(lines[i], &line, &error) != DW_DLV_OK ||
            dwarf_line_srcfileno(lines[i], &file, &error) != DW_DLV_OK ||
            dwarf_lineendsequence(lines[i], &end_sequence, &error) != DW_DLV_OK) {
          if (error) take_error(error);
          pending = false;
          continue;
        }
        if (sequence_start) {
          skip_sequence = is_tombstone(address);
          sequence_start = false;
        }
        if (pending && !skip_sequence && address > row.begin) {
          row.end = address;
          unit.rows.push_back(row);
        }
        // Several rows at one address (location views): the last one describes the instruction.
        pending = !end_sequence;
        if (end_sequence) {
          sequence_start = true;
          continue;
        }
        if (zero_means_one && file == 0) file = 1;
        row = LineRow{address, 0, file_index(unit, file, lines[i]), static_cast<uint32_t>(line)};
      }
    }
    dwarf_srclines_dealloc_b(context);
    std::stable_sort(unit.rows.begin(), unit.rows.end(),
                     [](const LineRow& a, const LineRow& b) { return a.begin < b.begin; });
  }

  /// The unit's file names (its line table's header), once.
  void read_files(Unit& unit, Dwarf_Die die) {
    if (unit.files_read) return;
    unit.files_read = true;
    Dwarf_Error error = nullptr;
    char** files = nullptr;
    Dwarf_Signed file_count = 0;
    int res = dwarf_srcfiles(die, &files, &file_count, &error);
    if (res == DW_DLV_ERROR) take_error(error);
    if (res != DW_DLV_OK) return;
    unit.files.reserve(static_cast<std::size_t>(file_count));
    for (Dwarf_Signed i = 0; i < file_count; ++i) {
      unit.files.push_back(interner->intern(normalize_path(files[i] ? files[i] : "")));
      dwarf_dealloc(dbg, files[i], DW_DLA_STRING);
    }
    dwarf_dealloc(dbg, files, DW_DLA_LIST);
  }

  /// Whether a unit's line table may have rows for `file`: its header names it. Units whose rows
  /// are not read yet are judged by their header alone (a Rust binary's standard-library units,
  /// most of its line rows, never name the program's files).
  bool may_have_rows_for(Unit& unit, std::string_view file) {
    if (!unit.lines_parsed && !unit.files_read) {
      Dwarf_Error error = nullptr;
      Dwarf_Die die = nullptr;
      if (dwarf_offdie_b(dbg, unit.die_offset, true, &die, &error) != DW_DLV_OK) {
        if (error) take_error(error);
        return true;  // parse_unit reports it
      }
      read_files(unit, die);
      dwarf_dealloc_die(die);
    }
    if (!unit.lines_parsed && unit.files.empty()) return true;  // no header list: the rows say
    for (std::string_view name : unit.files) {
      if (path_matches(name, file)) return true;
    }
    return false;
  }

  /// Index into unit.files of a line-table file number; names missing from the file list are
  /// taken from the row itself and appended.
  uint32_t file_index(Unit& unit, Dwarf_Unsigned number, Dwarf_Line line) {
    if (number >= unit.file_base && number - unit.file_base < unit.files.size()) {
      return static_cast<uint32_t>(number - unit.file_base);
    }
    char* name = nullptr;
    Dwarf_Error error = nullptr;
    std::string_view text = "<unknown>";
    int res = dwarf_linesrc(line, &name, &error);
    if (res == DW_DLV_OK && name) {
      text = interner->intern(normalize_path(name));
      dwarf_dealloc(dbg, name, DW_DLA_STRING);
    } else if (res == DW_DLV_ERROR) {
      take_error(error);
    }
    for (std::size_t i = 0; i < unit.files.size(); ++i)
      if (unit.files[i].data() == text.data()) return static_cast<uint32_t>(i);
    unit.files.push_back(text);
    return static_cast<uint32_t>(unit.files.size() - 1);
  }

  void parse_scopes(Unit& unit, Dwarf_Die unit_die) {
    if (!walk_children(unit, unit_die, kNone, 0, {})) {
      warn(fmt::format("malformed function DIEs in {} of {}; inline call sites may be missing", unit_label(unit),
                       debug_file));
    }
    std::sort(unit.functions.begin(), unit.functions.end(),
              [](const TopRange& a, const TopRange& b) { return a.begin < b.begin; });
  }

  /// Collects subprograms and inlined calls under `parent_die`; false on a libdwarf error.
  /// `prefix` names the enclosing namespaces and classes ("ns::Class::"), empty at unit level.
  bool walk_children(Unit& unit, Dwarf_Die parent_die, uint32_t parent, int depth, std::string_view prefix) {
    if (depth > kMaxDieDepth) return false;
    Dwarf_Error error = nullptr;
    Dwarf_Die child = nullptr;
    int res = dwarf_child(parent_die, &child, &error);
    if (res == DW_DLV_ERROR) {
      take_error(error);
      return false;
    }
    bool ok = true;
    while (res == DW_DLV_OK) {
      Dwarf_Half tag = 0;
      if (dwarf_tag(child, &tag, &error) != DW_DLV_OK) {
        take_error(error);
        ok = false;
      }
      switch (tag) {
        case DW_TAG_subprogram: {
          Dwarf_Off offset = 0;
          if (!prefix.empty() && dwarf_dieoffset(child, &offset, &error) == DW_DLV_OK) scope_prefix[offset] = prefix;
          if (error) take_error(error);
          auto ranges = ranges_of(child, unit);
          if (!ranges.empty()) {  // declarations and abstract instances hold no code
            auto node = static_cast<uint32_t>(unit.nodes.size());
            unit.nodes.push_back(ScopeNode{ranges, {}, name_of(child), {}, 0});
            for (const auto& r : ranges) unit.functions.push_back({r.begin, r.end, node});
            ok &= walk_children(unit, child, node, depth + 1, prefix);
          }
          break;
        }
        case DW_TAG_inlined_subroutine: {
          auto ranges = ranges_of(child, unit);
          if (!ranges.empty() && parent != kNone) {
            Dwarf_Unsigned call_file = UINT32_MAX, call_line = 0;
            attr_udata(child, DW_AT_call_file, &call_file);
            attr_udata(child, DW_AT_call_line, &call_line);
            auto node = static_cast<uint32_t>(unit.nodes.size());
            unit.nodes.push_back(ScopeNode{ranges, {}, name_of(child), unit.file_at(call_file),
                                           static_cast<uint32_t>(call_line)});
            unit.nodes[parent].children.push_back(node);
            ok &= walk_children(unit, child, node, depth + 1, prefix);
          }
          break;
        }
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
          if (parent != kNone) ok &= walk_children(unit, child, parent, depth + 1, prefix);
          break;
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type: {
          char* raw = nullptr;
          int named = dwarf_diename(child, &raw, &error);
          if (named == DW_DLV_ERROR) take_error(error);
          std::string scope(prefix);
          scope += named == DW_DLV_OK && raw ? raw : tag == DW_TAG_namespace ? "(anonymous namespace)" : "(anonymous)";
          scope += "::";
          ok &= walk_children(unit, child, kNone, depth + 1, interner->intern(scope));
          break;
        }
        default:
          break;
      }
      Dwarf_Die next = nullptr;
      res = dwarf_siblingof_b(dbg, child, true, &next, &error);
      dwarf_dealloc_die(child);
      child = next;
      if (res == DW_DLV_ERROR) {
        take_error(error);
        ok = false;
      }
    }
    return ok;
  }

  // ---- queries -------------------------------------------------------------------------------

  const LineRow* row_at(Unit& unit, uint64_t address) {
    parse_unit(unit);
    auto it = std::upper_bound(unit.rows.begin(), unit.rows.end(), address,
                               [](uint64_t a, const LineRow& row) { return a < row.begin; });
    // Rows rarely overlap (tombstoned duplicates); look back a little for one containing address.
    for (int steps = 0; it != unit.rows.begin() && steps < 4; ++steps) {
      --it;
      if (address < it->end) return &*it;
    }
    return nullptr;
  }

  bool lookup(uint64_t address, std::vector<SourceLine>* frames) {
    auto it = std::upper_bound(unit_ranges.begin(), unit_ranges.end(), address,
                               [](uint64_t a, const UnitRange& r) { return a < r.begin; });
    for (int steps = 0; it != unit_ranges.begin() && steps < 8; ++steps) {
      --it;
      if (address >= it->end) continue;
      Unit& unit = units[it->unit];
      const LineRow* row = row_at(unit, address);
      if (!row) continue;
      build_frames(unit, *row, address, frames);
      return true;
    }
    return false;
  }

  void build_frames(const Unit& unit, const LineRow& row, uint64_t address, std::vector<SourceLine>* frames) {
    frames->reserve(4);
    std::vector<uint32_t>& chain = chain_;  // outermost function first
    chain.clear();
    auto fn = std::upper_bound(unit.functions.begin(), unit.functions.end(), address,
                               [](uint64_t a, const TopRange& r) { return a < r.begin; });
    for (int steps = 0; fn != unit.functions.begin() && steps < 4 && chain.empty(); ++steps) {
      --fn;
      if (address < fn->end) chain.push_back(fn->node);
    }
    while (!chain.empty()) {
      uint32_t found = kNone;
      for (uint32_t child : unit.nodes[chain.back()].children) {
        if (unit.nodes[child].contains(address)) {
          found = child;
          break;
        }
      }
      if (found == kNone) break;
      chain.push_back(found);
    }
    frames->clear();
    std::string_view innermost = chain.empty() ? std::string_view{} : unit.nodes[chain.back()].name;
    frames->push_back(SourceLine{unit.files[row.file], row.line, innermost});
    for (std::size_t k = chain.size(); k-- > 1;) {
      const ScopeNode& inlined = unit.nodes[chain[k]];
      frames->push_back(SourceLine{inlined.call_file, inlined.call_line, unit.nodes[chain[k - 1]].name});
    }
  }

  void parse_all(bool scopes) {
    for (auto& unit : units) parse_unit(unit, scopes);
  }
};

DwarfIndex::DwarfIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DwarfIndex::~DwarfIndex() = default;

Result<std::unique_ptr<DwarfIndex>> DwarfIndex::open(const std::string& debug_file, const std::string& object,
                                                     Interner* interner, std::vector<std::string>* warnings) {
  auto impl = std::make_unique<Impl>();
  impl->object = object;
  impl->debug_file = debug_file;
  impl->interner = interner;
  impl->sink = warnings;
  auto access = ElfDwarfAccess::open(debug_file);
  if (!access.ok()) return Error{access.error()};
  impl->access = std::move(access.value());
  for (auto& note : impl->access->take_notes()) impl->warn(std::move(note));
  auto indexed = impl->open_and_index();
  if (!indexed.ok()) return Error{indexed.error()};
  return std::unique_ptr<DwarfIndex>(new DwarfIndex(std::move(impl)));
}

bool DwarfIndex::lookup(uint64_t address, std::vector<SourceLine>* frames) { return impl_->lookup(address, frames); }

void DwarfIndex::ranges_for(std::string_view file, uint32_t line, std::vector<AddressRange>* out) {
  std::vector<bool> matches;
  for (auto& unit : impl_->units) {
    if (!impl_->may_have_rows_for(unit, file)) continue;
    impl_->parse_unit(unit, /*scopes=*/false);
    matches.assign(unit.files.size(), false);
    bool any = false;
    for (std::size_t i = 0; i < unit.files.size(); ++i) any |= (matches[i] = path_matches(unit.files[i], file));
    if (!any) continue;
    for (const auto& row : unit.rows) {
      if (row.line == line && matches[row.file]) out->push_back({row.begin, row.end});
    }
  }
}

std::vector<std::string_view> DwarfIndex::files_with_code() {
  impl_->parse_all(/*scopes=*/false);
  std::unordered_set<const char*> seen;
  std::vector<std::string_view> out;
  for (const auto& unit : impl_->units) {
    for (const auto& row : unit.rows) {
      std::string_view file = unit.files[row.file];
      if (seen.insert(file.data()).second) out.push_back(file);
    }
  }
  return out;
}

void DwarfIndex::summarize(DebugSummary* summary) {
  impl_->parse_all(/*scopes=*/true);
  std::unordered_set<const char*> files;
  std::set<int> versions;
  summary->compilation_units = impl_->units.size();
  summary->line_rows = 0;
  for (const auto& unit : impl_->units) {
    versions.insert(unit.version);
    summary->line_rows += unit.raw_rows;
    for (auto file : unit.files) files.insert(file.data());
  }
  summary->files = files.size();
  summary->dwarf_versions.assign(versions.begin(), versions.end());
  summary->warnings = impl_->warnings;
  if (impl_->dropped_warnings > 0) {
    summary->warnings.push_back(fmt::format("{} more warnings not shown", impl_->dropped_warnings));
  }
}

std::size_t DwarfIndex::unit_count() const { return impl_->units.size(); }

std::size_t DwarfIndex::units_with_rows() const {
  return static_cast<std::size_t>(std::count_if(impl_->units.begin(), impl_->units.end(),
                                                [](const Unit& unit) { return unit.lines_parsed; }));
}

}  // namespace whatif::symbols
