// The DCPI-style stall analysis for x86-64 (see stalls.h and docs/stalls.md). Offline, one thread.
#include "analysis/stalls/stalls.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <set>

#include "symbols/symbol_map.h"
#include "x86/describe.h"

namespace whatif::stalls {
namespace {

const Latency kRows[] = {
#include "whatif/latency_table.inc"
};

struct Block {
  std::size_t first = 0, last = 0;  // instruction indices, inclusive
  std::vector<std::size_t> succs, preds;
  bool self_loop = false;
  bool exits = false;  // ends the procedure (ret, tail jump, trap) or has successors outside it
};

struct Edge {
  std::size_t from, to;
  double frequency = -1;
};

struct Decoded {
  x86::Description d;
  uint64_t address = 0;
  Latency latency{};
  double issue = 0;       // uops / width
  double start = 0;       // scheduled issue time (steady state for self-loops)
  double stall = 0;       // static stall before it
  Cause stall_cause = Cause::dependency;
  uint64_t stall_culprit = 0;
  std::vector<std::size_t> load_producers;  // loads whose results it reads (in its block)
  bool after_divide = false;                // reads a divide's result (in its block)
  std::size_t block = 0;
};

}  // namespace

const char* confidence_name(Confidence c) {
  switch (c) {
    case Confidence::low: return "low";
    case Confidence::medium: return "medium";
    case Confidence::high: return "high";
  }
  return "?";
}

const char* cause_name(Cause cause) {
  switch (cause) {
    case Cause::icache: return "I-cache";
    case Cause::dcache: return "D-cache";
    case Cause::dtlb: return "DTLB";
    case Cause::mispredict: return "branch mispredict";
    case Cause::long_latency: return "long-latency unit (div/sqrt)";
    case Cause::store_buffer: return "store buffer";
    case Cause::unexplained: return "unexplained";
    case Cause::dependency: return "dependency chain";
    case Cause::static_unit: return "divider/sqrt latency";
    case Cause::static_load: return "load latency (L1 hit)";
  }
  return "?";
}

char cause_letter(Cause cause) {
  switch (cause) {
    case Cause::icache: return 'i';
    case Cause::dcache: return 'd';
    case Cause::dtlb: return 't';
    case Cause::mispredict: return 'p';
    case Cause::long_latency: return 'u';
    case Cause::store_buffer: return 'w';
    case Cause::unexplained: return '?';
    case Cause::dependency: return 'r';
    case Cause::static_unit: return 'f';
    case Cause::static_load: return 'l';
  }
  return '?';
}

bool is_dynamic(Cause cause) { return cause <= Cause::unexplained; }

const Model& Model::table() {
  static const Model model = [] {
    Model m;
    m.cpu = WHATIF_LATENCY_CPU;
    m.source = WHATIF_LATENCY_SOURCE;
    for (const Latency& row : kRows) m.rows.emplace(row.form, row);
    return m;
  }();
  return model;
}

Latency Model::lookup(const std::string& form, const std::string& mnemonic, bool loads) const {
  if (auto it = rows.find(form); it != rows.end()) return it->second;
  // The same mnemonic with another operand width or kind: prefer one that loads when this loads.
  const Latency* best = nullptr;
  for (auto it = rows.lower_bound(mnemonic); it != rows.end() && it->first.compare(0, mnemonic.size(), mnemonic) == 0; ++it) {
    if (it->first.size() > mnemonic.size() && it->first[mnemonic.size()] != ' ') continue;
    if (best == nullptr || (it->second.loads == loads && best->loads != loads)) best = &it->second;
  }
  if (best != nullptr) return *best;
  return {"", 1, loads ? load_latency + 1 : 1, 0.25, loads, false};
}

namespace {

std::vector<Decoded> disassemble(const ElfCode& code, const Function& function, const Model& model) {
  std::vector<Decoded> out;
  std::vector<uint8_t> bytes = code.bytes(function.start, function.size);
  if (bytes.empty()) return out;
  x86::Decoder decoder;
  for (uint64_t offset = 0; offset < bytes.size();) {
    Decoded item;
    item.address = function.start + offset;
    item.d = x86::describe(decoder, bytes.data() + offset, bytes.size() - offset, item.address);
    if (item.d.basic.length == 0) {  // not code (padding, data): one byte, no successor
      item.d.basic.length = 1;
      item.d.basic.transfer = x86::Transfer::kOther;
      item.d.text = "(bad)";
    }
    item.latency = model.lookup(item.d.form, item.d.mnemonic, item.d.loads);
    item.issue = std::max(1, item.latency.uops) / model.issue_width;
    offset += item.d.basic.length;
    out.push_back(std::move(item));
  }
  return out;
}

bool in_function(const Function& f, uint64_t address) { return address >= f.start && address < f.start + f.size; }

/// Basic blocks and their edges. Branch-record edges add the targets of indirect jumps.
std::vector<Block> build_cfg(std::vector<Decoded>& code, const Function& function, const analysis::BranchSamples* branches,
                             bool& missing_edges) {
  std::map<uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < code.size(); ++i) index[code[i].address] = i;
  std::set<std::size_t> leaders = {0};
  std::map<std::size_t, std::set<std::size_t>> indirect_targets;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const x86::Instruction& b = code[i].d.basic;
    if (b.transfer == x86::Transfer::kNone || b.transfer == x86::Transfer::kCall || b.transfer == x86::Transfer::kIndirectCall) continue;
    if (i + 1 < code.size()) leaders.insert(i + 1);
    if ((b.transfer == x86::Transfer::kJump || b.transfer == x86::Transfer::kConditional) && index.count(b.target)) {
      leaders.insert(index[b.target]);
    }
  }
  if (branches != nullptr) {
    for (const auto& edge : branches->edges) {
      if (!in_function(function, edge.to) || !index.count(edge.to)) continue;
      leaders.insert(index[edge.to]);
      if (index.count(edge.from) && code[index[edge.from]].d.basic.transfer == x86::Transfer::kIndirectJump) {
        indirect_targets[index[edge.from]].insert(index[edge.to]);
      }
    }
  }
  std::vector<Block> blocks;
  std::vector<std::size_t> leader_list(leaders.begin(), leaders.end());
  for (std::size_t k = 0; k < leader_list.size(); ++k) {
    Block block;
    block.first = leader_list[k];
    block.last = (k + 1 < leader_list.size() ? leader_list[k + 1] : code.size()) - 1;
    for (std::size_t i = block.first; i <= block.last; ++i) code[i].block = blocks.size();
    blocks.push_back(block);
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const Decoded& last = code[blocks[b].last];
    auto link = [&](std::size_t to_instruction) {
      std::size_t to = code[to_instruction].block;
      if (std::find(blocks[b].succs.begin(), blocks[b].succs.end(), to) != blocks[b].succs.end()) return;
      blocks[b].succs.push_back(to);
      blocks[to].preds.push_back(b);
      if (to == b) blocks[b].self_loop = true;
    };
    bool falls = blocks[b].last + 1 < code.size();
    switch (last.d.basic.transfer) {
      case x86::Transfer::kNone: case x86::Transfer::kCall: case x86::Transfer::kIndirectCall:
        if (falls) link(blocks[b].last + 1);
        else blocks[b].exits = true;
        break;
      case x86::Transfer::kJump:
        if (index.count(last.d.basic.target)) link(index[last.d.basic.target]);
        else blocks[b].exits = true;  // a tail call
        break;
      case x86::Transfer::kConditional:
        if (index.count(last.d.basic.target)) link(index[last.d.basic.target]);
        else blocks[b].exits = true;
        if (falls) link(blocks[b].last + 1);
        break;
      case x86::Transfer::kIndirectJump:
        if (indirect_targets.count(blocks[b].last)) {
          for (std::size_t to : indirect_targets[blocks[b].last]) link(to);
        } else {
          missing_edges = true;  // a jump table we do not follow (or a tail call through a pointer)
          blocks[b].exits = true;
        }
        break;
      case x86::Transfer::kReturn: case x86::Transfer::kOther:
        blocks[b].exits = true;
        break;
    }
  }
  return blocks;
}

/// Schedules each block on the model (in-order issue, issue_width micro-ops per cycle, operands
/// ready after their producer's latency, one divider busy for its reciprocal throughput). A block
/// that loops to itself is scheduled twice and the second pass kept: its loop-carried chains are
/// statically known stalls. Fills start, stall, cause and culprit; returns each block's cycles.
void schedule(std::vector<Decoded>& code, const std::vector<Block>& blocks) {
  for (const Block& block : blocks) {
    std::map<uint16_t, std::pair<double, std::size_t>> ready;  // register -> (time, producer)
    double t = 0, divider_free = 0;
    std::size_t last_divide = SIZE_MAX;
    int passes = block.self_loop ? 2 : 1;
    for (int pass = 0; pass < passes; ++pass) {
      for (std::size_t i = block.first; i <= block.last; ++i) {
        Decoded& item = code[i];
        double start = t;
        std::size_t culprit = SIZE_MAX;
        if (pass == passes - 1) {
          item.load_producers.clear();
          item.after_divide = false;
        }
        for (uint16_t reg : item.d.reads) {
          auto it = ready.find(reg);
          if (it == ready.end()) continue;
          const Decoded& producer = code[it->second.second];
          if (pass == passes - 1) {
            if (producer.d.loads && reg != x86::kFlags) item.load_producers.push_back(it->second.second);
            if (producer.d.divides) item.after_divide = true;
          }
          if (it->second.first > start) {
            start = it->second.first;
            culprit = it->second.second;
          }
        }
        if (item.d.divides && divider_free > start) {
          start = divider_free;
          culprit = last_divide;
        }
        if (pass == passes - 1) {
          item.start = start;
          item.stall = start - t;
          item.stall_culprit = culprit == SIZE_MAX ? 0 : code[culprit].address;
          item.stall_cause = culprit == SIZE_MAX ? Cause::dependency
                             : code[culprit].d.divides ? Cause::static_unit
                             : code[culprit].d.loads   ? Cause::static_load
                                                       : Cause::dependency;
        }
        t = start + item.issue;
        for (uint16_t reg : item.d.writes) ready[reg] = {start + std::max(1, item.latency.latency), i};
        if (item.d.divides) {
          divider_free = start + std::max(1.0, item.latency.rthroughput);
          last_divide = i;
        }
      }
    }
  }
}

/// Cycles at the head of the queue in the best case (DCPI's M_i): the stall before it plus its issue.
double best_case(const Decoded& item) { return item.stall + item.issue; }

/// `xor r, r` and the like: the result does not depend on the register, and cores know it.
bool zero_idiom(const Decoded& item) {
  static const std::set<std::string> kinds = {"xor", "sub", "pxor", "xorps", "xorpd", "vpxor", "vxorps", "vxorpd"};
  if (!kinds.count(item.d.mnemonic)) return false;
  const std::string& t = item.d.text;
  std::size_t space = t.find(' '), comma = t.find(", ");
  return space != std::string::npos && comma != std::string::npos && t.substr(space + 1, comma - space - 1) == t.substr(comma + 2);
}

/// Best-case cycles of one iteration of a block that loops to itself, on an out-of-order core:
/// the iterations overlap, so the in-order sum of M_i over the body overstates it whenever
/// independent chains run side by side. Dataflow schedule of successive iterations: micro-ops
/// dispatch in order, `issue_width` per cycle; each starts when its operands (and the divider) are
/// ready; results after the table's latency; retirement in order. The steady state, the retirement
/// interval of the later iterations, is bounded below by the longest loop-carried chain and by the
/// issue width: the cycles an unstalled iteration holds the head of the reorder buffer.
double steady_iteration(const std::vector<Decoded>& code, const Block& block, double issue_width) {
  constexpr int kIterations = 16;
  std::map<uint16_t, double> ready;
  double dispatch = 0, retire = 0, divider_free = 0, retired_half = 0;
  for (int k = 0; k < kIterations; ++k) {
    for (std::size_t i = block.first; i <= block.last; ++i) {
      const Decoded& item = code[i];
      double start = dispatch;
      if (!zero_idiom(item)) {
        for (uint16_t reg : item.d.reads) {
          auto it = ready.find(reg);
          if (it != ready.end()) start = std::max(start, it->second);
        }
      }
      if (item.d.divides) {
        start = std::max(start, divider_free);
        divider_free = start + std::max(1.0, item.latency.rthroughput);
      }
      // The table's latency as is: 0 for register moves the core eliminates at rename.
      double done = start + std::max(0, item.latency.latency);
      for (uint16_t reg : item.d.writes) ready[reg] = done;
      double slots = std::max(1, item.latency.uops) / issue_width;
      dispatch += slots;
      retire = std::max(retire + slots, done);
    }
    if (k == kIterations / 2 - 1) retired_half = retire;
  }
  return (retire - retired_half) / (kIterations / 2);
}

/// A block's best-case cycles per execution: a self-loop's steady-state iteration, else the sum of M_i.
double block_cycles(const std::vector<Decoded>& code, const Block& block, const Model& model) {
  if (block.self_loop) return steady_iteration(code, block, model.issue_width);
  double m = 0;
  for (std::size_t i = block.first; i <= block.last; ++i) m += best_case(code[i]);
  return m;
}

struct Window {
  double samples = 0, weight = 0;  // weight: sum of M (times the relative count with branch records)
  double ratio() const { return weight > 0 ? samples / weight : 0; }
};

/// DCPI's estimate from issue points: the ratios S/M of windows of issue points (at least one cycle
/// of best case each, so single-sample noise and skid average out), clustered from the smallest:
/// the first cluster (max <= 1.5 x min) holding at least a quarter of the windows gives
/// F = sum S / sum M over it. Few samples: F = sum S / sum M over all.
std::pair<double, Confidence> estimate(std::vector<Window> windows) {
  double samples = 0, weight = 0;
  for (const Window& w : windows) samples += w.samples, weight += w.weight;
  if (weight <= 0) return {-1, Confidence::low};
  if (samples < 40 || windows.size() < 2) return {samples / weight, samples >= 20 ? Confidence::medium : Confidence::low};
  std::sort(windows.begin(), windows.end(), [](const Window& a, const Window& b) { return a.ratio() < b.ratio(); });
  // Small classes have few issue points: the smallest sampled ratio is then the best evidence of an
  // unstalled one (DCPI: the heuristic overestimates F when every issue point stalls).
  std::size_t need = windows.size() >= 4 ? std::max<std::size_t>(2, (windows.size() + 3) / 4) : 1;
  for (std::size_t a = 0; a < windows.size(); ++a) {
    if (windows[a].samples <= 0) continue;  // an unsampled window says nothing but "rare"
    std::size_t b = a;
    while (b + 1 < windows.size() && windows[b + 1].ratio() <= 1.5 * windows[a].ratio()) ++b;
    std::size_t count = b - a + 1;
    if (count < need) continue;
    double s = 0, m = 0;
    for (std::size_t k = a; k <= b; ++k) s += windows[k].samples, m += windows[k].weight;
    if (s <= 0 || m <= 0) continue;
    Confidence confidence = count >= 3 && count * 2 >= windows.size() && s >= 100 ? Confidence::high
                            : count >= 2 && s >= 40                                ? Confidence::medium
                                                                                   : Confidence::low;
    return {s / m, confidence};
  }
  return {samples / weight, Confidence::low};
}

}  // namespace

ProcedureResult analyse(const ElfCode& code_file, const Function& function, const std::string& object,
                        const std::map<uint64_t, double>& counts, const analysis::BranchSamples* branches,
                        const Options& options, const Model& model) {
  ProcedureResult result;
  result.name = function.name;
  result.object = object;
  result.build_id = code_file.build_id();
  result.start = function.start;
  result.size = function.size;
  std::vector<Decoded> code = disassemble(code_file, function, model);
  if (code.empty()) return result;
  bool missing_edges = false;
  std::vector<Block> blocks = build_cfg(code, function, branches, missing_edges);
  schedule(code, blocks);

  std::size_t n = code.size();
  std::vector<double> sampled(n, 0), charged(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    auto it = counts.find(code[i].address);
    if (it != counts.end()) sampled[i] = it->second;
  }
  // Skid: a sample names the instruction after the one that held the head of the queue, so it is
  // moved back one instruction, except where the model itself charges a wait to the named
  // instruction (it waits for a producer: that wait is its own) and at a block head (mispredicts and
  // I-cache misses show there). Never across blocks.
  auto keeps = [&](std::size_t i) { return !options.skid || i == blocks[code[i].block].first || code[i].stall > 0; };
  for (std::size_t i = 0; i < n; ++i) {
    if (keeps(i)) charged[i] += sampled[i];
    else charged[i - 1] += sampled[i];
  }
  // An instruction that neither keeps its own samples nor receives its successor's has no CPI.
  auto informative = [&](std::size_t i) {
    return keeps(i) || (i < blocks[code[i].block].last && !keeps(i + 1));
  };

  // ---- frequencies ----------------------------------------------------------------------------
  // DCPI's estimate assumes some issue points run unstalled; it fails "for classes with only one or
  // two issue points where dynamic stalls occur regularly" (section 6.2). Samples that sit (after
  // skid) on an instruction that may stall for a time the model cannot bound (a load or a consumer
  // of its result: a cache or TLB miss; a block head reached by a conditional or indirect branch: a
  // mispredict) look the same whether it stalled or not: a loop of L1 hits and one of misses give the
  // same samples. When most of the samples an estimate rests on are of that kind, it is low confidence.
  auto may_stall = [&](std::size_t i) {
    if (code[i].d.loads || !code[i].load_producers.empty()) return true;
    const Block& block = blocks[code[i].block];
    if (i != block.first) return false;
    return std::any_of(block.preds.begin(), block.preds.end(), [&](std::size_t p) {
      auto kind = code[blocks[p].last].d.basic.transfer;
      return kind == x86::Transfer::kConditional || kind == x86::Transfer::kIndirectJump;
    });
  };
  std::vector<double> block_unbounded(blocks.size(), 0), block_charged(blocks.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    block_charged[code[i].block] += charged[i];
    if (may_stall(i)) block_unbounded[code[i].block] += charged[i];
  }
  std::vector<double> block_f(blocks.size(), -1);
  std::vector<Confidence> block_c(blocks.size(), Confidence::low);
  // Blocks whose estimate is only an upper bound on F: most of its samples sit where a stall has no
  // bound the code gives (below). F is then the largest frequency the samples allow (every load an
  // L1 hit); any smaller one fits them as well, with the difference stalled at those instructions.
  std::vector<bool> upper_bound(blocks.size(), false);
  std::vector<double> relative(n, -1);  // branch-record counts per instruction
  bool from_records = false;
  if (branches != nullptr && !branches->ranges.empty()) {
    std::fill(relative.begin(), relative.end(), 0);
    for (const auto& range : branches->ranges) {
      for (std::size_t i = 0; i < n; ++i) {
        if (code[i].address >= range.start && code[i].address <= range.end) relative[i] += range.count;
      }
    }
    from_records = std::any_of(relative.begin(), relative.end(), [](double c) { return c > 0; });
  }
  if (from_records) {
    // The records give relative counts; the samples give the scale: windows of S / (count * M), a
    // window per block (its steady-state iteration for a self-loop), since on an out-of-order core
    // the samples of an iteration gather on the instruction its chain completes at.
    std::vector<Window> windows;
    for (const Block& block : blocks) {
      double count = relative[block.first], m = block_cycles(code, block, model), s = 0;
      for (std::size_t i = block.first; i <= block.last; ++i) s += sampled[i];
      if (count > 0 && m > 0) windows.push_back({s, count * m});
    }
    auto [scale, confidence] = estimate(windows);
    if (scale < 0) scale = 0;
    // Windows without samples say only "rare": with one sampled window the estimate rests on it alone,
    // which with enough samples is as good as a one-block loop's (medium), not a lone issue point's.
    double sampled_windows = 0, window_samples = 0;
    for (const Window& w : windows) sampled_windows += w.samples > 0 ? 1 : 0, window_samples += w.samples;
    if (sampled_windows == 1 && window_samples >= 40) confidence = Confidence::medium;
    // The upper bound S_b >= F_b * M_b of every block (see the heuristic's below): with the counts
    // exact up to the scale, each well-sampled block bounds it. Fewer than 20 samples: too noisy a
    // bound (a minimum over noisy blocks errs low).
    for (const Block& block : blocks) {
      double count = relative[block.first], s = 0, m = block_cycles(code, block, model);
      for (std::size_t i = block.first; i <= block.last; ++i) s += sampled[i];
      if (count > 0 && m > 0 && s >= 20) scale = std::min(scale, s / (count * m));
    }
    double unbounded = 0, total = 0;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (relative[blocks[b].first] > 0) unbounded += block_unbounded[b], total += block_charged[b];
    }
    bool bound = total > 0 && unbounded * 2 > total;
    if (bound) confidence = Confidence::low;
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      double count = relative[blocks[b].first];
      upper_bound[b] = bound && count > 0;
      block_f[b] = scale * count;
      block_c[b] = count >= 20 ? Confidence::high : count > 0 ? Confidence::medium : Confidence::low;
      block_c[b] = std::min(block_c[b], confidence);  // the scale is as good as its own estimate
    }
  } else {
    // Frequency classes: straight-line chains (A's only successor is B, B's only predecessor A).
    std::vector<std::size_t> cls(blocks.size());
    std::iota(cls.begin(), cls.end(), 0);
    std::function<std::size_t(std::size_t)> find = [&](std::size_t x) { return cls[x] == x ? x : cls[x] = find(cls[x]); };
    if (!missing_edges) {
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        if (blocks[b].succs.size() == 1 && !blocks[b].exits) {
          std::size_t s = blocks[b].succs[0];
          if (s != b && blocks[s].preds.size() == 1 && s != 0) cls[find(s)] = find(b);
        }
      }
    }
    // Two readings of the samples: as taken (a wait is charged to the consumer, where skid puts the
    // producer's time too) and skid-corrected. Either can put a long stall in a window whose best case
    // is small, and the heuristic only errs upwards then, so each class takes the smaller estimate.
    for (const std::vector<double>* counts : {&sampled, &charged}) {
      std::map<std::size_t, std::vector<Window>> windows;
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        Window w;
        for (std::size_t i = blocks[b].first; i <= blocks[b].last; ++i) {
          if (counts == &charged && !informative(i)) continue;
          w.samples += (*counts)[i];
          w.weight += best_case(code[i]);
          if (w.weight >= 1.0) windows[find(b)].push_back(std::exchange(w, {}));
        }
        if (w.weight > 0) windows[find(b)].push_back(w);
      }
      for (auto& [root, list] : windows) {
        auto [f, confidence] = estimate(list);
        if (f < 0) continue;
        double samples = 0;
        for (const Window& w : list) samples += w.samples;
        if (samples <= 0) continue;  // leave unsampled classes to propagation
        if (block_f[root] >= 0 && block_f[root] <= f) continue;
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          if (find(b) == root) block_f[b] = f, block_c[b] = confidence;
        }
      }
    }
    // An upper bound per class: S = F * C with C >= M for every block, so F <= S_b / M_b. On an
    // out-of-order core the instructions of a loop iteration retire together behind the one that
    // completes last, and the samples pile onto it: an issue point with a small M_i but the whole
    // iteration's samples would otherwise make F look many times larger. A self-loop's M_b is its
    // steady-state iteration (overlapping iterations), else the block's sum of M_i.
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (block_f[b] < 0) continue;
      double s = 0, m = block_cycles(code, blocks[b], model);
      for (std::size_t i = blocks[b].first; i <= blocks[b].last; ++i) s += sampled[i];
      if (m <= 0 || s <= 0 || block_f[b] <= s / m) continue;
      std::size_t root = find(b);
      for (std::size_t c = 0; c < blocks.size(); ++c) {
        if (find(c) == root) block_f[c] = std::min(block_f[c], s / m);
      }
    }
    {
      std::map<std::size_t, std::pair<double, double>> unbounded;  // class -> (unbounded, all) samples
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        unbounded[find(b)].first += block_unbounded[b];
        unbounded[find(b)].second += block_charged[b];
      }
      for (std::size_t b = 0; b < blocks.size(); ++b) {
        auto [u, all] = unbounded[find(b)];
        if (block_f[b] >= 0 && all > 0 && u * 2 > all) {
          block_c[b] = Confidence::low;
          upper_bound[b] = true;
          continue;
        }
        // A loop of one block whose samples are not of that kind: its whole iteration is the window.
        // DCPI widens an issue point's window back to the instruction it depends on, whose latency
        // dynamic stalls cannot shorten; on an out-of-order core that is the loop-carried chain, one
        // iteration. Single issue points' ratios only add noise here (4 samples against 30).
        if (!blocks[b].self_loop || find(b) != b || all <= 0) continue;
        bool alone = true;
        for (std::size_t c = 0; c < blocks.size(); ++c) alone = alone && (c == b || find(c) != b);
        double s = 0, m = block_cycles(code, blocks[b], model);
        for (std::size_t i = blocks[b].first; i <= blocks[b].last; ++i) s += sampled[i];
        if (!alone || m <= 0 || s <= 0) continue;
        block_f[b] = s / m;
        // One window: no second one to show it unstalled (DCPI rates few issue points lower).
        block_c[b] = s >= 40 ? Confidence::medium : Confidence::low;
      }
    }
    // Local propagation over the flow constraints: a block's frequency is the sum of its incoming
    // (and of its outgoing) edges; no negative estimates.
    std::vector<Edge> edges;
    std::vector<std::vector<std::size_t>> out(blocks.size()), in(blocks.size());
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      for (std::size_t s : blocks[b].succs) {
        out[b].push_back(edges.size());
        in[s].push_back(edges.size());
        edges.push_back({b, s});
      }
    }
    if (!missing_edges) {
      for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          auto solve = [&](const std::vector<std::size_t>& side, bool boundary) {
            if (boundary) return;  // entry (no predecessors) or exit: the constraint does not hold
            double known = 0;
            std::size_t unknown = SIZE_MAX, unknowns = 0;
            for (std::size_t e : side) {
              if (edges[e].frequency >= 0) known += edges[e].frequency;
              else unknown = e, ++unknowns;
            }
            if (block_f[b] >= 0 && unknowns == 1) {
              edges[unknown].frequency = std::max(0.0, block_f[b] - known);
              changed = true;
            } else if (block_f[b] < 0 && unknowns == 0 && !side.empty()) {
              block_f[b] = known;
              block_c[b] = Confidence::low;
              changed = true;
            }
          };
          solve(in[b], b == 0 || blocks[b].preds.empty());
          solve(out[b], blocks[b].exits || blocks[b].succs.empty());
        }
      }
    }
    // Flow bounds: the heuristic errs upwards (a class whose issue points all stall looks more
    // frequent), so a block fed only by `b` cannot run more often than `b`, and the blocks `b` alone
    // feeds share its frequency: scale such successors down when they add up to more. Only ever down.
    if (!missing_edges) {
      for (int round = 0; round < 4; ++round) {
        for (std::size_t b = 0; b < blocks.size(); ++b) {
          if (block_f[b] < 0 || blocks[b].exits) continue;
          double fed = 0;
          std::vector<std::size_t> only;
          for (std::size_t succ : blocks[b].succs) {
            if (succ == b || blocks[succ].preds.size() != 1 || block_f[succ] < 0) continue;
            only.push_back(succ);
            fed += block_f[succ];
          }
          bool all = only.size() == blocks[b].succs.size();
          if (only.empty() || fed <= block_f[b] * 1.05 || (!all && only.size() > 1)) continue;
          double scale = block_f[b] / fed;
          if (!all) scale = std::min(1.0, block_f[b] / block_f[only.front()]);
          for (std::size_t succ : only) {
            block_f[succ] *= scale;
            if (block_c[succ] == Confidence::high) block_c[succ] = Confidence::medium;
          }
        }
      }
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      if (block_f[b] >= 0) continue;
      double s = 0, m = 0;
      for (std::size_t i = blocks[b].first; i <= blocks[b].last; ++i) s += charged[i], m += best_case(code[i]);
      block_f[b] = m > 0 ? s / m : 0;
      block_c[b] = Confidence::low;
    }
  }

  // ---- per instruction: CPI, stalls, culprits -------------------------------------------------
  double hot_lines_ok = options.hot_code_bytes >= 0 && options.hot_code_bytes < model.icache_bytes / 2;
  auto line_of = [&](uint64_t a) { return static_cast<uint64_t>(a / static_cast<uint64_t>(model.cache_line)); };
  for (std::size_t i = 0; i < n; ++i) {
    const Decoded& item = code[i];
    const Block& block = blocks[item.block];
    InstructionResult row;
    row.address = item.address;
    row.text = item.d.text;
    row.length = item.d.basic.length;
    row.samples = sampled[i];
    row.charged = charged[i];
    row.block_head = i == block.first;
    row.frequency = from_records && relative[i] >= 0 ? block_f[item.block] * (relative[block.first] > 0 ? relative[i] / relative[block.first] : 1)
                                                     : block_f[item.block];
    if (from_records && relative[block.first] <= 0 && relative[i] > 0) row.frequency = block_f[item.block];
    row.executions = options.period_cycles > 0 ? row.frequency * options.period_cycles : -1;
    row.confidence = block_c[item.block];
    row.issue = item.issue;
    row.best_case = best_case(item);
    row.static_stall = item.stall;
    row.static_cause = item.stall_cause;
    row.static_culprit = item.stall_culprit;
    row.cpi = row.frequency > 0 ? row.charged / row.frequency : 0;
    row.dynamic_stall = row.frequency > 0 && informative(i) ? row.cpi - row.best_case : 0;
    double dyn = row.dynamic_stall;
    std::vector<std::size_t> loads = item.load_producers;  // the loads whose results it awaits, or itself
    if (item.d.loads) loads.push_back(i);
    // A load or a load's consumer in a block whose F is only an upper bound: at F its wait looks like
    // the model's L1 hit (a static stall), but any smaller F fits the samples too, and then the same
    // samples are a longer wait for the load: a miss. Guilty until proven innocent, the D-cache may
    // explain every cycle it spends beyond issuing (DCPI: an instruction that consumes a load's result
    // and stalls long is a D-cache candidate; a dependency chain without a load never is).
    double missable = upper_bound[item.block] && !loads.empty() && row.frequency > 0 && informative(i) ? row.cpi - row.issue : 0;
    if ((dyn > 0.5 && dyn > 0.1 * row.best_case) || missable > 0.5) {
      dyn = std::max(0.0, dyn);
      std::vector<Culprit> candidates;
      // I-cache: a head whose predecessors end in another line, or the first instruction in a new
      // line (or the one after it: skid); ruled out when the program's hot code fits in half the I-cache.
      bool new_line = line_of(item.address) != line_of(item.address - 1) ||
                      (i > 0 && line_of(code[i - 1].address) != line_of(code[i - 1].address - 1) && i - 1 >= block.first);
      bool icache = false;
      if (row.block_head) {
        icache = block.preds.empty();
        for (std::size_t p : block.preds) {
          if (line_of(code[blocks[p].last].address) != line_of(item.address)) icache = true;
        }
      } else {
        icache = new_line;
      }
      // DCPI's line rule assumes fetch and issue in step: a missing line stalls the instruction that
      // starts it. An out-of-order core fetches ahead of retirement behind a reorder buffer, so a
      // miss shows at the head of the queue wherever the back end drains it: once the program's hot
      // code outgrows the I-cache (capacity misses on every pass), no instruction can be ruled out.
      bool capacity = options.hot_code_bytes > model.icache_bytes;
      if ((icache || capacity) && !hot_lines_ok) candidates.push_back({Cause::icache, 0, 0, dyn});
      // D-cache and DTLB: the instruction loads, or consumes a load's result.
      if (!loads.empty()) {
        candidates.push_back({Cause::dcache, code[loads.front()].address, 0, std::max(dyn, missable)});
        bool stack_only = std::all_of(loads.begin(), loads.end(), [&](std::size_t l) { return code[l].d.local_address; });
        if (!stack_only) candidates.push_back({Cause::dtlb, code[loads.front()].address, 0, std::min(dyn, model.page_walk)});
      }
      // Branch mispredict: a head reached from a conditional or indirect branch.
      if (row.block_head) {
        for (std::size_t p : block.preds) {
          const Decoded& branch = code[blocks[p].last];
          auto kind = branch.d.basic.transfer;
          if (kind != x86::Transfer::kConditional && kind != x86::Transfer::kIndirectJump) continue;
          double bound = model.mispredict_penalty;
          candidates.push_back({Cause::mispredict, branch.address, 0, std::min(dyn, bound)});
          break;
        }
      }
      // Long-latency units: a divide, or what waits for one.
      if (item.d.divides || item.after_divide) {
        candidates.push_back({Cause::long_latency, item.address, 0, std::min(dyn, static_cast<double>(std::max(1, item.latency.latency)))});
      }
      // Store buffer: a store (its buffer full of earlier stores).
      if (item.d.stores) candidates.push_back({Cause::store_buffer, item.address, 0, dyn});
      std::erase_if(candidates, [](const Culprit& c) { return c.high <= 0; });  // (dyn clamped at 0: nothing to explain)
      double highs = 0;
      for (const Culprit& c : candidates) highs += c.high;
      for (Culprit& c : candidates) c.low = std::min(c.high, std::max(0.0, dyn - (highs - c.high)));
      if (candidates.empty()) candidates.push_back({Cause::unexplained, 0, dyn, dyn});
      // What the candidates' upper bounds cannot cover is unexplained too.
      double max_cover = 0;
      for (const Culprit& c : candidates) max_cover += c.high;
      if (candidates.front().cause != Cause::unexplained && max_cover < dyn) {
        candidates.push_back({Cause::unexplained, 0, dyn - max_cover, dyn - max_cover});
      }
      row.culprits = std::move(candidates);
    }
    result.instructions.push_back(std::move(row));
  }

  // ---- the Figure 4 summary ---------------------------------------------------------------
  Summary& s = result.summary;
  s.from_branch_records = from_records;
  s.missing_edges = missing_edges;
  s.clock_mhz = options.clock_mhz;
  s.clock_measured = options.clock_measured;
  std::map<Cause, CauseRange> causes;
  double best = 0;
  for (const InstructionResult& row : result.instructions) {
    s.samples += row.samples;
    s.instructions += row.frequency;
    best += row.frequency * row.best_case;
    s.execution += row.frequency * row.issue;
    s.static_stall += row.frequency * row.static_stall;
    if (row.static_stall > 0) {
      CauseRange& c = causes.try_emplace(row.static_cause, CauseRange{row.static_cause}).first->second;
      c.low += row.frequency * row.static_stall;
      c.high += row.frequency * row.static_stall;
    }
    if (row.dynamic_stall > 0) s.dynamic_stall += row.frequency * row.dynamic_stall;
    else s.unexplained_gain += row.frequency * row.dynamic_stall;
    for (const Culprit& culprit : row.culprits) {
      CauseRange& c = causes.try_emplace(culprit.cause, CauseRange{culprit.cause}).first->second;
      c.low += row.frequency * culprit.low;
      c.high += row.frequency * culprit.high;
    }
    double share = s.samples > 0 ? row.samples : 0;
    (row.confidence == Confidence::high ? s.high_share : row.confidence == Confidence::medium ? s.medium_share : s.low_share) += share;
  }
  s.total_cycles = s.samples;
  if (s.samples > 0) s.high_share /= s.samples, s.medium_share /= s.samples, s.low_share /= s.samples;
  s.best_case_cpi = s.instructions > 0 ? best / s.instructions : 0;
  s.actual_cpi = s.instructions > 0 ? s.samples / s.instructions : 0;
  for (auto& [cause, range] : causes) s.causes.push_back(range);
  return result;
}

// ---- over a whole profile ---------------------------------------------------------------------

namespace {

struct Objects {
  std::map<std::string, Result<ElfCode>> files;
  const ElfCode* get(const std::string& path, const std::string& build_id, std::vector<std::string>* notes) {
    auto it = files.find(path);
    if (it == files.end()) {
      it = files.emplace(path, ElfCode::read(path)).first;
      if (!it->second && notes) notes->push_back("stall analysis: " + it->second.error());
      if (it->second && !build_id.empty() && !it->second->build_id().empty() && it->second->build_id() != build_id && notes) {
        notes->push_back("stall analysis: " + path + " changed since the run (build id " + it->second->build_id() +
                         ", the profile's " + build_id + "): rebuild-free reruns only");
        files.erase(it);
        files.emplace(path, Error{"changed"});
        return nullptr;
      }
    }
    return it->second ? &*it->second : nullptr;
  }
};

const analysis::BranchSamples* branches_for(const std::vector<analysis::BranchSamples>& all, const analysis::InstructionSamples& of) {
  for (const auto& b : all) {
    if (b.path == of.path && (b.build_id.empty() || of.build_id.empty() || b.build_id == of.build_id)) return &b;
  }
  return nullptr;
}

/// Line tables, read once per object.
struct Lines {
  std::map<std::string, std::unique_ptr<symbols::SymbolMap>> maps;
  symbols::SymbolMap* get(const std::string& path) {
    auto it = maps.find(path);
    if (it == maps.end()) {
      auto map = symbols::SymbolMap::for_file(path);
      it = maps.emplace(path, map ? std::move(*map) : nullptr).first;
    }
    return it->second.get();
  }
};

void add_sources(ProcedureResult& result, symbols::SymbolMap* map) {
  if (map == nullptr) return;
  for (InstructionResult& row : result.instructions) {
    if (auto info = map->lookup(row.address)) {
      const symbols::SourceLine& line = info->frames.front();
      row.source = std::string(line.file) + ":" + std::to_string(line.line);
    }
  }
}

}  // namespace

// The program's hot code in bytes: 64-byte lines that ran while sampled. Lines that ran but drew no
// sample are estimated from how many drew one or two (Chao's estimator of unseen classes,
// f1 (f1 - 1) / (2 (f2 + 1))): 3000 samples over a 36 KB loop leave a quarter of its lines unsampled, which made
// it look smaller than the 32 KB I-cache in one run of two.
double hot_code_bytes(const std::vector<analysis::InstructionSamples>& all) {
  std::map<std::pair<std::string, uint64_t>, double> lines;
  for (const auto& object : all) {
    for (const auto& [address, count] : object.counts) {
      if (count > 0) lines[{object.path, address / 64}] += count;
    }
  }
  double f1 = 0, f2 = 0;
  for (const auto& [line, count] : lines) f1 += count == 1 ? 1 : 0, f2 += count == 2 ? 1 : 0;
  double unseen = f1 * (f1 - 1) / (2 * (f2 + 1));  // the bias-corrected form, defined for f2 = 0
  return (static_cast<double>(lines.size()) + unseen) * 64;
}

namespace {
/// The clock period_cycles uses, for the reports.
void set_clock(Options& options, const analysis::Profile& profile) {
  options.clock_measured = profile.measured_mhz > 0;
  options.clock_mhz = options.clock_measured ? profile.measured_mhz : 0;
  for (const analysis::Header& h : profile.headers) {
    if (!options.clock_measured && options.clock_mhz <= 0 && h.cpu_mhz > 0) options.clock_mhz = h.cpu_mhz;
  }
}
}  // namespace

double period_cycles(const analysis::Profile& profile) {
  for (const analysis::Header& h : profile.headers) {
    if (h.sampling_period_ns <= 0) continue;
    // The measured clock when the launcher recorded one: the nominal clock of /proc/cpuinfo is not
    // the rate the core ran at (a 2.45 GHz EPYC ran dependent adds at 3.18 GHz, boosted), and each
    // execution count is the period in cycles times F.
    if (profile.measured_mhz > 0) return h.sampling_period_ns * profile.measured_mhz / 1000.0;
    if (h.cpu_mhz > 0) return h.sampling_period_ns * h.cpu_mhz / 1000.0;
  }
  return 0;
}

std::vector<ProcedureSamples> procedures(const analysis::Profile& profile, std::vector<std::string>* notes) {
  Objects objects;
  std::map<std::pair<std::string, std::string>, double> by;
  for (const auto& object : analysis::merged_instructions(profile)) {
    const ElfCode* code = objects.get(object.path, object.build_id, notes);
    for (const auto& [address, count] : object.counts) {
      const Function* f = code != nullptr ? code->function_at(address) : nullptr;
      by[{f != nullptr ? f->name : "(unknown)", object.path}] += count;
    }
  }
  std::vector<ProcedureSamples> out;
  for (const auto& [key, samples] : by) out.push_back({key.first, key.second, samples});
  std::sort(out.begin(), out.end(), [](const ProcedureSamples& a, const ProcedureSamples& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.name < b.name;
  });
  return out;
}

std::vector<ProcedureResult> analyse_profile(const analysis::Profile& profile, double min_share,
                                             std::vector<std::string>* notes, bool skid) {
  auto merged = analysis::merged_instructions(profile);
  auto branches = analysis::merged_branches(profile);
  Options options;
  options.skid = skid;
  options.period_cycles = period_cycles(profile);
  set_clock(options, profile);
  options.hot_code_bytes = hot_code_bytes(merged);
  double total = 0;
  for (const auto& object : merged)
    for (const auto& [a, c] : object.counts) total += c;
  Objects objects;
  Lines lines;
  std::vector<ProcedureResult> out;
  for (const auto& object : merged) {
    const ElfCode* code = objects.get(object.path, object.build_id, notes);
    if (code == nullptr) continue;
    std::map<const Function*, double> sampled;
    for (const auto& [address, count] : object.counts) {
      if (const Function* f = code->function_at(address)) sampled[f] += count;
    }
    for (const auto& [function, samples] : sampled) {
      if (total <= 0 || samples / total < min_share || samples <= 0) continue;
      ProcedureResult result = analyse(*code, *function, object.path, object.counts, branches_for(branches, object), options);
      add_sources(result, lines.get(object.path));
      out.push_back(std::move(result));
    }
  }
  std::sort(out.begin(), out.end(), [](const ProcedureResult& a, const ProcedureResult& b) {
    return a.summary.samples != b.summary.samples ? a.summary.samples > b.summary.samples : a.name < b.name;
  });
  return out;
}

Result<ProcedureResult> analyse_function(const analysis::Profile& profile, const std::string& name, bool skid) {
  auto merged = analysis::merged_instructions(profile);
  if (merged.empty()) {
    return Error{"the profile has no per-instruction samples (`instructions` records): run it again without "
                 "--no-instructions"};
  }
  auto branches = analysis::merged_branches(profile);
  Options options;
  options.skid = skid;
  options.period_cycles = period_cycles(profile);
  set_clock(options, profile);
  options.hot_code_bytes = hot_code_bytes(merged);
  std::vector<std::string> notes;
  Objects objects;
  for (const auto& object : merged) {
    const ElfCode* code = objects.get(object.path, object.build_id, &notes);
    if (code == nullptr) continue;
    if (const Function* f = code->function_named(name)) {
      ProcedureResult result = analyse(*code, *f, object.path, object.counts, branches_for(branches, object), options);
      Lines lines;
      add_sources(result, lines.get(object.path));
      return result;
    }
  }
  std::string why = notes.empty() ? "" : " (" + notes.front() + ")";
  return Error{"--annotate " + name + ": no function of that name in the profiled objects" + why +
               "; list them with `whatif report --procedures PROFILE`"};
}

}  // namespace whatif::stalls
