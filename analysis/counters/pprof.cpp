// pprof's profile.proto by hand: varints and length-delimited fields in the message's field numbers.
// Launcher process, one thread.
#include "analysis/counters/pprof.h"

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include <fmt/format.h>

namespace whatif::counters {
namespace {

// profile.proto field numbers.
namespace field {
constexpr int kSampleType = 1, kSample = 2, kLocation = 4, kFunction = 5, kStringTable = 6, kDurationNanos = 10,
              kComment = 13, kDefaultSampleType = 14;
constexpr int kValueTypeType = 1, kValueTypeUnit = 2;
constexpr int kSampleLocationId = 1, kSampleValue = 2, kSampleLabel = 3;
constexpr int kLabelKey = 1, kLabelStr = 2, kLabelNum = 3;
constexpr int kLocationId = 1, kLocationLine = 4;
constexpr int kLineFunctionId = 1, kLineLine = 2;
constexpr int kFunctionId = 1, kFunctionName = 2, kFunctionSystemName = 3, kFunctionFilename = 4;
}  // namespace field

/// One protobuf message being written.
class Message {
 public:
  void varint(int number, uint64_t value) {
    key(number, 0);
    raw_varint(value);
  }
  void bytes(int number, std::string_view value) {
    key(number, 2);
    raw_varint(value.size());
    out_.append(value);
  }
  void message(int number, const Message& inner) { bytes(number, inner.out_); }
  /// A packed repeated varint field (proto3's default for repeated scalars).
  void packed(int number, const std::vector<uint64_t>& values) {
    Message inner;
    for (uint64_t value : values) inner.raw_varint(value);
    bytes(number, inner.out_);
  }
  const std::string& data() const { return out_; }

 private:
  void key(int number, int wire) { raw_varint(static_cast<uint64_t>(number) << 3 | static_cast<uint64_t>(wire)); }
  void raw_varint(uint64_t value) {
    while (value >= 0x80) {
      out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
      value >>= 7;
    }
    out_.push_back(static_cast<char>(value));
  }
  std::string out_;
};

class Strings {
 public:
  Strings() { index(""); }
  uint64_t index(const std::string& text) {
    auto [it, added] = ids_.try_emplace(text, table_.size());
    if (added) table_.push_back(text);
    return it->second;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::map<std::string, uint64_t> ids_;
  std::vector<std::string> table_;
};

uint64_t rounded(double value) { return value > 0 ? static_cast<uint64_t>(std::llround(value)) : 0; }

}  // namespace

Result<std::string> pprof_profile(const analysis::Profile& profile, const std::vector<PprofEdge>& edges) {
  if (profile.function_counters.empty() && profile.sample_counts.empty() && edges.empty()) {
    return Error{"--pprof: " + profile.path +
                 " has no function counters, line samples or branch records: profile with `whatif run --counters "
                 "CONFIG` or `--lbr`"};
  }
  Strings strings;
  std::vector<std::string> comments;
  // Events: every name any record carries, minus those the runtime could not open (its warning).
  std::vector<std::string> events;
  for (const auto& record : profile.function_counters) {
    for (const auto& event : record.events) {
      bool known = false;
      for (const std::string& name : events) known = known || name == event.name;
      if (!known) events.push_back(event.name);
    }
  }
  std::vector<std::string> counted;
  for (const std::string& name : events) {
    bool unavailable = false;
    for (const std::string& warning : profile.warnings) {
      unavailable = unavailable || warning.find("event " + name + " not available") != std::string::npos;
    }
    if (unavailable) comments.push_back("event " + name + " was not available on this machine: left out");
    else counted.push_back(name);
  }

  // Sample types: [calls, cpu_inclusive, cpu_exclusive, EVENT_inclusive, EVENT_exclusive..., samples].
  std::vector<std::pair<std::string, std::string>> types = {
      {"calls", "count"}, {"cpu_inclusive", "nanoseconds"}, {"cpu_exclusive", "nanoseconds"}};
  for (const std::string& name : counted) {
    types.emplace_back(name + "_inclusive", "count");
    types.emplace_back(name + "_exclusive", "count");
  }
  std::size_t samples_index = types.size();
  types.emplace_back("samples", "count");
  std::size_t branches_index = types.size();
  if (!edges.empty()) types.emplace_back("taken_branches", "count");

  Message out;
  for (const auto& [type, unit] : types) {
    Message value_type;
    value_type.varint(field::kValueTypeType, strings.index(type));
    value_type.varint(field::kValueTypeUnit, strings.index(unit));
    out.message(field::kSampleType, value_type);
  }

  // One function and one location per name (a function, or FILE:LINE for the line samples).
  std::map<std::string, uint64_t> locations;
  std::vector<Message> location_messages, function_messages;
  auto location_of = [&](const std::string& name, const std::string& file, long line) {
    auto [it, added] = locations.try_emplace(name, locations.size() + 1);
    if (added) {
      Message function;
      function.varint(field::kFunctionId, it->second);
      function.varint(field::kFunctionName, strings.index(name));
      function.varint(field::kFunctionSystemName, strings.index(name));
      if (!file.empty()) function.varint(field::kFunctionFilename, strings.index(file));
      function_messages.push_back(function);
      Message line_message;
      line_message.varint(field::kLineFunctionId, it->second);
      if (line > 0) line_message.varint(field::kLineLine, static_cast<uint64_t>(line));
      Message location;
      location.varint(field::kLocationId, it->second);
      location.message(field::kLocationLine, line_message);
      location_messages.push_back(location);
    }
    return it->second;
  };
  auto label = [&](Message& sample, const char* key, long number) {
    Message message;
    message.varint(field::kLabelKey, strings.index(key));
    message.varint(field::kLabelNum, static_cast<uint64_t>(number));
    sample.message(field::kSampleLabel, message);
  };

  auto text_label = [&](Message& sample, const char* key, const std::string& value) {
    Message message;
    message.varint(field::kLabelKey, strings.index(key));
    message.varint(field::kLabelStr, strings.index(value));
    sample.message(field::kSampleLabel, message);
  };
  /// FILE:LINE -> (file, line), or ("", 0) for anything else (a function name, 0xADDRESS).
  auto split_line = [](const std::string& name) -> std::pair<std::string, long> {
    std::size_t colon = name.rfind(':');
    bool is_line = colon != std::string::npos && colon + 1 < name.size() &&
                   name.find_first_not_of("0123456789", colon + 1) == std::string::npos;
    return is_line ? std::pair<std::string, long>{name.substr(0, colon), std::stol(name.substr(colon + 1))}
                   : std::pair<std::string, long>{"", 0};
  };

  std::map<std::string, std::pair<double, double>> scaled_share;  // event -> (calls counted, calls)
  for (const auto& record : profile.function_counters) {
    std::vector<uint64_t> values(types.size(), 0);
    values[0] = record.calls;
    values[1] = rounded(record.inclusive_ns);
    values[2] = rounded(record.exclusive_ns);
    for (std::size_t e = 0; e < counted.size(); ++e) {
      for (const auto& event : record.events) {
        if (event.name != counted[e]) continue;
        // Cycled event sets: counted in `measured` of the calls; scaled to all of them.
        double measured = event.measured >= 0 ? event.measured : static_cast<double>(record.calls);
        double scale = measured > 0 ? static_cast<double>(record.calls) / measured : 0;
        values[3 + 2 * e] = rounded(event.inclusive * scale);
        values[4 + 2 * e] = rounded(event.exclusive * scale);
        auto& share = scaled_share[event.name];
        share.first += measured;
        share.second += static_cast<double>(record.calls);
      }
    }
    Message sample;
    sample.packed(field::kSampleLocationId, {location_of(record.function, "", 0)});
    sample.packed(field::kSampleValue, values);
    long pid = record.process < profile.headers.size() ? profile.headers[record.process].pid : 0;
    label(sample, "pid", pid);
    label(sample, "tid", record.tid);
    out.message(field::kSample, sample);
  }
  for (const auto& [name, share] : scaled_share) {
    if (share.first < share.second) {
      comments.push_back(fmt::format("event {} counted in {:.0f} of {:.0f} calls (event sets cycle by call count): scaled",
                                     name, share.first, share.second));
    }
  }
  for (const auto& [line, count] : profile.sample_counts) {
    std::vector<uint64_t> values(types.size(), 0);
    values[samples_index] = rounded(count);
    auto [file, number] = split_line(line);
    Message sample;
    sample.packed(field::kSampleLocationId, {location_of(line, file, number)});
    sample.packed(field::kSampleValue, values);
    out.message(field::kSample, sample);
  }
  for (const PprofEdge& edge : edges) {
    std::vector<uint64_t> values(types.size(), 0);
    values[branches_index] = edge.count;
    auto [file, number] = split_line(edge.from_line);
    Message sample;
    sample.packed(field::kSampleLocationId, {location_of(edge.from_line, file, number)});
    sample.packed(field::kSampleValue, values);
    text_label(sample, "to", edge.to_line);
    label(sample, "from_address", static_cast<long>(edge.from));
    label(sample, "to_address", static_cast<long>(edge.to));
    text_label(sample, "object", edge.object);
    out.message(field::kSample, sample);
  }
  for (const Message& location : location_messages) out.message(field::kLocation, location);
  for (const Message& function : function_messages) out.message(field::kFunction, function);
  if (profile.runtime_ns > 0) out.varint(field::kDurationNanos, rounded(profile.runtime_ns));
  std::vector<uint64_t> comment_ids;
  for (const std::string& comment : comments) comment_ids.push_back(strings.index(comment));
  if (!comment_ids.empty()) out.packed(field::kComment, comment_ids);
  const char* default_type = !profile.function_counters.empty() ? "cpu_exclusive"
                             : !profile.sample_counts.empty() ? "samples"
                                                              : "taken_branches";
  out.varint(field::kDefaultSampleType, strings.index(default_type));
  for (const std::string& text : strings.table()) out.bytes(field::kStringTable, text);
  return out.data();
}

Result<std::string> gzip(std::string_view bytes) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error{"gzip: deflateInit2 failed"};
  }
  std::string out(deflateBound(&stream, bytes.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  stream.avail_in = static_cast<uInt>(bytes.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int result = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return Error{"gzip: deflate did not finish"};
  return out;
}

}  // namespace whatif::counters
