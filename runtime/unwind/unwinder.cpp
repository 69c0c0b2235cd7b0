// The unwinder: libunwind's remote API (dlopen'ed, RTLD_LOCAL) over a snapshot, with accessors
// modelled on perf's (tools/perf/util/unwind-libunwind-local.c) and a cache of this process's
// loaded objects. Profiler thread only; never in a signal handler.
#include "unwind/unwinder.h"

#define UNW_REMOTE_ONLY  // types and constants only: every function comes through dlsym
#include <dlfcn.h>
#include <libunwind.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

namespace whatif::unwind {
namespace {

// Not declared by libunwind.h; perf declares it the same way.
using SearchUnwindTable = int (*)(unw_addr_space_t, unw_word_t ip, unw_dyn_info_t*, unw_proc_info_t*,
                                  int need_unwind_info, void* arg);
using CreateAddrSpace = unw_addr_space_t (*)(unw_accessors_t*, int byte_order);
using DestroyAddrSpace = void (*)(unw_addr_space_t);
using SetCachingPolicy = int (*)(unw_addr_space_t, unw_caching_policy_t);
using FlushCache = void (*)(unw_addr_space_t, unw_word_t, unw_word_t);
using InitRemote = int (*)(unw_cursor_t*, unw_addr_space_t, void*);
using Step = int (*)(unw_cursor_t*);
using GetReg = int (*)(unw_cursor_t*, int, unw_word_t*);

constexpr const char* kLibrary = "libunwind-x86_64.so.8";

// .eh_frame_hdr: version 1; eh_frame_ptr pcrel|sdata4, fde_count udata4, table datarel|sdata4 (the
// encodings every GNU linker writes); then 4 + 4 bytes before the sorted (initial location, FDE)
// table of 8-byte entries.
constexpr unsigned char kHdrVersion = 1, kEhFramePtrEnc = 0x1b, kFdeCountEnc = 0x03, kTableEnc = 0x3b;
constexpr uint64_t kHdrTableOffset = 12;
constexpr uint64_t kTableEntryBytes = 8;

/// An object's code and where its unwind table is.
struct Object {
  uint64_t text_begin = 0, text_end = 0;  // executable PT_LOAD span
  uint64_t eh_frame_hdr = 0;              // 0: none, or encodings we do not read
  uint64_t fde_count = 0;
};

/// A readable PT_LOAD segment, widened to whole pages (what is actually mapped).
struct Segment {
  uint64_t begin = 0, end = 0;
};

/// libunwind's x86-64 register numbers (RAX=0, RDX, RCX, RBX, RSI, RDI, RBP, RSP, R8..R15, RIP=16)
/// to perf's; -1 for the rest.
int perf_register(unw_regnum_t reg) {
  static constexpr int kMap[] = {kAx, kDx, kCx, kBx, kSi, kDi, kBp, kSp,
                                 kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15, kIp};
  return reg >= 0 && reg < static_cast<int>(std::size(kMap)) ? kMap[reg] : -1;
}

}  // namespace

struct Unwinder::Impl {
  void* library = nullptr;
  SearchUnwindTable search_unwind_table = nullptr;
  CreateAddrSpace create_addr_space = nullptr;
  DestroyAddrSpace destroy_addr_space = nullptr;
  SetCachingPolicy set_caching_policy = nullptr;
  FlushCache flush_cache = nullptr;
  InitRemote init_remote = nullptr;
  Step step = nullptr;
  GetReg get_reg = nullptr;

  unw_accessors_t accessors{};
  unw_addr_space_t space = nullptr;
  std::vector<Object> objects;    // sorted by text_begin
  std::vector<Segment> segments;  // sorted by begin
  unsigned long long adds = ~0ull, subs = ~0ull;
  const Snapshot* snapshot = nullptr;  // the one being unwound

  ~Impl() {
    if (space != nullptr) destroy_addr_space(space);
    // The library stays loaded: libunwind keeps global state (caches, mempools) we cannot account for.
  }

  /// Rebuilds the object cache when the loader says objects came or went. True when it changed.
  bool refresh() {
    struct Counters {
      unsigned long long adds = 0, subs = 0;
    } counters;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t size, void* data) -> int {
          auto* c = static_cast<Counters*>(data);
          if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
            c->adds = info->dlpi_adds;
            c->subs = info->dlpi_subs;
          }
          return 1;  // the counters are the same in every entry
        },
        &counters);
    if (counters.adds == adds && counters.subs == subs) return false;
    adds = counters.adds;
    subs = counters.subs;
    objects.clear();
    segments.clear();
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
          static_cast<Impl*>(data)->add_object(*info);
          return 0;
        },
        this);
    std::sort(objects.begin(), objects.end(), [](const Object& a, const Object& b) { return a.text_begin < b.text_begin; });
    std::sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) { return a.begin < b.begin; });
    if (space != nullptr) flush_cache(space, 0, 0);  // cached procedures may be gone or moved
    return true;
  }

  void add_object(const dl_phdr_info& info) {
    const uint64_t page = 4096;
    Object object;
    object.text_begin = UINT64_MAX;
    uint64_t hdr = 0;
    for (int i = 0; i < info.dlpi_phnum; ++i) {
      const ElfW(Phdr)& phdr = info.dlpi_phdr[i];
      uint64_t begin = info.dlpi_addr + phdr.p_vaddr, end = begin + phdr.p_memsz;
      if (phdr.p_type == PT_LOAD && phdr.p_memsz > 0) {
        if ((phdr.p_flags & PF_R) != 0) segments.push_back({begin & ~(page - 1), (end + page - 1) & ~(page - 1)});
        if ((phdr.p_flags & PF_X) != 0) {
          object.text_begin = std::min(object.text_begin, begin);
          object.text_end = std::max(object.text_end, end);
        }
      } else if (phdr.p_type == PT_GNU_EH_FRAME) {
        hdr = begin;
      }
    }
    if (object.text_begin >= object.text_end) return;  // no code
    if (hdr != 0) {
      // Mapped in this process (it is the object's own header, inside a PT_LOAD segment).
      const auto* bytes = reinterpret_cast<const unsigned char*>(hdr);
      if (bytes[0] == kHdrVersion && bytes[1] == kEhFramePtrEnc && bytes[2] == kFdeCountEnc && bytes[3] == kTableEnc) {
        uint32_t count = 0;
        std::memcpy(&count, bytes + 8, sizeof(count));
        object.eh_frame_hdr = hdr;
        object.fde_count = count;
      }
    }
    objects.push_back(object);
  }

  const Object* find_object(uint64_t ip) const {
    auto it = std::upper_bound(objects.begin(), objects.end(), ip,
                               [](uint64_t address, const Object& o) { return address < o.text_begin; });
    if (it == objects.begin()) return nullptr;
    --it;
    return ip < it->text_end ? &*it : nullptr;
  }

  /// The object whose code holds ip, refreshing the cache once on a miss (e.g. after dlopen).
  const Object* object_for(uint64_t ip) {
    const Object* object = find_object(ip);
    if (object == nullptr && refresh()) object = find_object(ip);
    return object;
  }

  /// [address, address + bytes) lies in one loaded object's mapped segment.
  bool mapped(uint64_t address, uint64_t bytes) const {
    auto it = std::upper_bound(segments.begin(), segments.end(), address,
                               [](uint64_t a, const Segment& s) { return a < s.begin; });
    // Segments of different objects never overlap, but one object's may share a page: look back.
    for (int back = 0; back < 2 && it != segments.begin(); ++back) {
      --it;
      if (address >= it->begin && address + bytes <= it->end && address + bytes > address) return true;
    }
    return false;
  }

  // ---- libunwind's accessors (arg: this Impl) ----

  static int find_proc_info(unw_addr_space_t space, unw_word_t ip, unw_proc_info_t* info, int need_unwind_info,
                            void* arg) {
    auto* self = static_cast<Impl*>(arg);
    const Object* object = self->object_for(ip);
    if (object == nullptr || object->eh_frame_hdr == 0 || object->fde_count == 0) return -UNW_ENOINFO;
    unw_dyn_info_t table;
    std::memset(&table, 0, sizeof(table));
    table.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    table.start_ip = object->text_begin;
    table.end_ip = object->text_end;
    table.u.rti.segbase = object->eh_frame_hdr;  // the table's datarel base
    table.u.rti.table_data = object->eh_frame_hdr + kHdrTableOffset;
    table.u.rti.table_len = object->fde_count * kTableEntryBytes / sizeof(unw_word_t);
    return self->search_unwind_table(space, ip, &table, info, need_unwind_info, arg);
  }

  static void put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) {}

  static int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

  static int access_mem(unw_addr_space_t, unw_word_t address, unw_word_t* value, int write, void* arg) {
    if (write != 0) return -UNW_EINVAL;
    const auto* self = static_cast<const Impl*>(arg);
    const Snapshot& snapshot = *self->snapshot;
    if (address >= snapshot.stack_start && snapshot.stack_size >= sizeof(unw_word_t) &&
        address - snapshot.stack_start <= snapshot.stack_size - sizeof(unw_word_t)) {
      std::memcpy(value, snapshot.stack + (address - snapshot.stack_start), sizeof(*value));
      return 0;
    }
    // Code, .eh_frame and data of the objects loaded in this same process; nothing else (the stack
    // beyond the snapshot has changed since the sample and other memory may not be mapped).
    if (self->mapped(address, sizeof(unw_word_t))) {
      std::memcpy(value, reinterpret_cast<const void*>(address), sizeof(*value));
      return 0;
    }
    return -UNW_EINVAL;
  }

  static int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void* arg) {
    if (write != 0) return -UNW_EREADONLYREG;
    int index = perf_register(reg);
    if (index < 0) return -UNW_EBADREG;
    *value = static_cast<const Impl*>(arg)->snapshot->regs[index];
    return 0;
  }

  static int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) { return -UNW_EINVAL; }
  static int resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }
  static int get_proc_name(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) { return -UNW_EINVAL; }
};

Unwinder::Unwinder() = default;
Unwinder::~Unwinder() = default;

bool Unwinder::load() {
  if (tried_) return impl_ != nullptr;
  tried_ = true;
  auto impl = std::make_unique<Impl>();
  // RTLD_LOCAL: libunwind's _Unwind_* must never come before libgcc_s's in the program's lookup
  // order, or they would take over its C++ exception unwinding.
  impl->library = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (impl->library == nullptr) {
    const char* why = dlerror();
    load_error_ = std::string("cannot load ") + kLibrary + " (" + (why ? why : "not found") +
                  "): samples in library code without frame pointers are attributed by frame-pointer "
                  "callchains only, which skip their caller; install it with `apt-get install libunwind8`";
    return false;
  }
  const char* missing = nullptr;
  auto resolve = [&](auto& function, const char* name) {
    function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(impl->library, name));
    if (function == nullptr && missing == nullptr) missing = name;
  };
  resolve(impl->search_unwind_table, "_Ux86_64_dwarf_search_unwind_table");
  resolve(impl->create_addr_space, "_Ux86_64_create_addr_space");
  resolve(impl->destroy_addr_space, "_Ux86_64_destroy_addr_space");
  resolve(impl->set_caching_policy, "_Ux86_64_set_caching_policy");
  resolve(impl->flush_cache, "_Ux86_64_flush_cache");
  resolve(impl->init_remote, "_Ux86_64_init_remote");
  resolve(impl->step, "_Ux86_64_step");
  resolve(impl->get_reg, "_Ux86_64_get_reg");
  if (missing != nullptr) {
    load_error_ = std::string(kLibrary) + " lacks " + missing + " (an unexpected libunwind version): samples in "
                  "library code without frame pointers are attributed by frame-pointer callchains only; install "
                  "Debian's libunwind8 with `apt-get install libunwind8`";
    return false;  // the library stays loaded (harmless, RTLD_LOCAL)
  }
  impl->accessors.find_proc_info = &Impl::find_proc_info;
  impl->accessors.put_unwind_info = &Impl::put_unwind_info;
  impl->accessors.get_dyn_info_list_addr = &Impl::get_dyn_info_list_addr;
  impl->accessors.access_mem = &Impl::access_mem;
  impl->accessors.access_reg = &Impl::access_reg;
  impl->accessors.access_fpreg = &Impl::access_fpreg;
  impl->accessors.resume = &Impl::resume;
  impl->accessors.get_proc_name = &Impl::get_proc_name;
  impl->space = impl->create_addr_space(&impl->accessors, 0);
  if (impl->space == nullptr) {
    load_error_ = std::string(kLibrary) + " could not create an address space: samples in library code without "
                  "frame pointers are attributed by frame-pointer callchains only";
    return false;
  }
  impl->set_caching_policy(impl->space, UNW_CACHE_GLOBAL);
  impl->refresh();
  impl_ = std::move(impl);
  return true;
}

std::size_t Unwinder::unwind(const Snapshot& snapshot, uint64_t* frames, std::size_t capacity, StopAt stop_at,
                             void* context) {
  if (impl_ == nullptr || capacity == 0 || snapshot.regs == nullptr) return 0;
  Impl& impl = *impl_;
  // Objects may have come or gone since the last snapshot: never read a segment that is gone.
  impl.refresh();
  impl.snapshot = &snapshot;
  struct Reset {
    Impl& impl;
    ~Reset() { impl.snapshot = nullptr; }
  } reset{impl};
  frames[0] = snapshot.regs[kIp];
  std::size_t count = 1;
  if (stop_at != nullptr && stop_at(context, frames[0], 0)) return count;
  unw_cursor_t cursor;
  if (impl.init_remote(&cursor, impl.space, &impl) == 0) {
    while (count < capacity && impl.step(&cursor) > 0) {
      unw_word_t ip = 0;
      if (impl.get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
      frames[count] = ip;
      ++count;
      if (stop_at != nullptr && stop_at(context, ip, count - 1)) break;
    }
  }
  return count;
}

}  // namespace whatif::unwind
