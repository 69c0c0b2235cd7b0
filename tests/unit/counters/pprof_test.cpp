// Unit tests of `whatif export --pprof` (analysis/counters/pprof): the profile.proto message decoded
// back field by field with a reader written from the .proto's wire format, after gunzip, so what
// pprof would see is checked: sample types, per-thread values scaled for cycled event sets, labels,
// line samples, comments for what was scaled or left out.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/counters/pprof.h"
#include "analysis/profile/profile.h"

namespace whatif::counters {
namespace {

/// One decoded field: a varint or the bytes of a length-delimited field.
struct Field {
  int number = 0;
  uint64_t varint = 0;
  std::string bytes;
};

uint64_t read_varint(const std::string& data, std::size_t& at) {
  uint64_t value = 0;
  for (int shift = 0; at < data.size(); shift += 7) {
    auto byte = static_cast<uint8_t>(data[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  ADD_FAILURE() << "truncated varint";
  return value;
}

std::vector<Field> decode(const std::string& data) {
  std::vector<Field> fields;
  std::size_t at = 0;
  while (at < data.size()) {
    uint64_t key = read_varint(data, at);
    Field field;
    field.number = static_cast<int>(key >> 3);
    if ((key & 7) == 0) {
      field.varint = read_varint(data, at);
    } else if ((key & 7) == 2) {
      uint64_t size = read_varint(data, at);
      EXPECT_LE(at + size, data.size());
      field.bytes = data.substr(at, size);
      at += size;
    } else {
      ADD_FAILURE() << "unexpected wire type " << (key & 7);
      break;
    }
    fields.push_back(field);
  }
  return fields;
}

std::vector<uint64_t> packed(const std::string& bytes) {
  std::vector<uint64_t> values;
  std::size_t at = 0;
  while (at < bytes.size()) values.push_back(read_varint(bytes, at));
  return values;
}

std::string gunzip(const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

/// The decoded Profile message: string table, sample type names, samples (values, labels, function).
struct Decoded {
  std::vector<std::string> strings;
  std::vector<std::string> types, units;
  struct Sample {
    std::vector<uint64_t> values;
    std::map<std::string, uint64_t> labels;
    std::map<std::string, std::string> text_labels;
    std::string function;
  };
  std::vector<Sample> samples;
  std::vector<std::string> comments;
  std::string default_type;
  uint64_t duration = 0;

  uint64_t value(const Sample& sample, const std::string& type) const {
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (types[i] == type) return sample.values.at(i);
    }
    ADD_FAILURE() << "no sample type " << type;
    return 0;
  }
  const Sample* find(const std::string& function, uint64_t tid) const {
    for (const Sample& sample : samples) {
      if (sample.function == function && (tid == 0 || (sample.labels.count("tid") && sample.labels.at("tid") == tid))) return &sample;
    }
    return nullptr;
  }
};

Decoded decode_profile(const std::string& message) {
  Decoded out;
  std::vector<Field> fields = decode(message);
  for (const Field& field : fields) {
    if (field.number == 6) out.strings.push_back(field.bytes);
  }
  EXPECT_FALSE(out.strings.empty());
  EXPECT_EQ(out.strings.at(0), "") << "string_table[0] must be empty";
  auto text = [&](uint64_t index) { return index < out.strings.size() ? out.strings[index] : std::string("?"); };
  std::map<uint64_t, std::string> function_names;  // function id -> name
  std::map<uint64_t, uint64_t> location_function;  // location id -> function id
  for (const Field& field : fields) {
    if (field.number == 5) {
      uint64_t id = 0, name = 0;
      for (const Field& f : decode(field.bytes)) {
        if (f.number == 1) id = f.varint;
        if (f.number == 2) name = f.varint;
      }
      function_names[id] = text(name);
    } else if (field.number == 4) {
      uint64_t id = 0, function = 0;
      for (const Field& f : decode(field.bytes)) {
        if (f.number == 1) id = f.varint;
        if (f.number == 4) {
          for (const Field& line : decode(f.bytes)) {
            if (line.number == 1) function = line.varint;
          }
        }
      }
      location_function[id] = function;
    }
  }
  for (const Field& field : fields) {
    if (field.number == 1) {
      for (const Field& f : decode(field.bytes)) {
        if (f.number == 1) out.types.push_back(text(f.varint));
        if (f.number == 2) out.units.push_back(text(f.varint));
      }
    } else if (field.number == 2) {
      Decoded::Sample sample;
      for (const Field& f : decode(field.bytes)) {
        if (f.number == 1) sample.function = function_names[location_function[packed(f.bytes).at(0)]];
        if (f.number == 2) sample.values = packed(f.bytes);
        if (f.number == 3) {
          std::string key, value;
          uint64_t number = 0;
          bool is_text = false;
          for (const Field& l : decode(f.bytes)) {
            if (l.number == 1) key = text(l.varint);
            if (l.number == 2) value = text(l.varint), is_text = true;
            if (l.number == 3) number = l.varint;
          }
          if (is_text) sample.text_labels[key] = value;
          else sample.labels[key] = number;
        }
      }
      out.samples.push_back(sample);
    } else if (field.number == 13) {
      for (uint64_t index : packed(field.bytes)) out.comments.push_back(text(index));
    } else if (field.number == 14) {
      out.default_type = text(field.varint);
    } else if (field.number == 10) {
      out.duration = field.varint;
    }
  }
  return out;
}

analysis::Profile parse(const std::string& text) {
  auto profile = analysis::parse_profile(text, "p.jsonl");
  EXPECT_TRUE(profile) << profile.error();
  return profile ? *profile : analysis::Profile{};
}

const char* kHeader =
    R"({"type":"header","format":"whatif-profile","version":1,"command":["./p"],"pid":4242,"sampler":"perf_event"})"
    "\n";

TEST(Pprof, CountersBecomeSampleTypesPerThreadWithCycledEventsScaled) {
  std::string text = std::string(kHeader) +
      R"({"type":"counters","tid":100,"function":"parent","calls":10,"inclusive_ns":50000000,"exclusive_ns":30000000,"events":{"cycles":[10000000,6000000,5],"page-faults":[7,3]},"elapsed_ns":1})" "\n"
      R"({"type":"counters","tid":101,"function":"parent","calls":4,"inclusive_ns":20000000,"exclusive_ns":12000000,"events":{"cycles":[0,0,0],"page-faults":[1,1]},"elapsed_ns":1})" "\n"
      R"({"type":"counters","tid":100,"function":"leaf","calls":20,"inclusive_ns":40000000,"exclusive_ns":40000000,"events":{"cycles":[4000000,4000000,10],"page-faults":[0,0]},"elapsed_ns":1})" "\n"
      R"({"type":"runtime","elapsed_ns":1000000000,"experiments":0,"exit_status":0})" "\n";
  auto message = pprof_profile(parse(text));
  ASSERT_TRUE(message) << message.error();
  auto compressed = gzip(*message);
  ASSERT_TRUE(compressed) << compressed.error();
  ASSERT_GE(compressed->size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>((*compressed)[0]), 0x1f) << "gzip magic, as pprof expects";
  Decoded decoded = decode_profile(gunzip(*compressed));

  EXPECT_EQ(decoded.types, (std::vector<std::string>{"calls", "cpu_inclusive", "cpu_exclusive", "cycles_inclusive",
                                                     "cycles_exclusive", "page-faults_inclusive",
                                                     "page-faults_exclusive", "samples"}));
  EXPECT_EQ(decoded.units.at(1), "nanoseconds");
  EXPECT_EQ(decoded.default_type, "cpu_exclusive");
  EXPECT_EQ(decoded.duration, 1000000000u);
  ASSERT_EQ(decoded.samples.size(), 3u);
  const auto* parent = decoded.find("parent", 100);
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(parent->labels.at("pid"), 4242u);
  EXPECT_EQ(decoded.value(*parent, "calls"), 10u);
  EXPECT_EQ(decoded.value(*parent, "cpu_inclusive"), 50000000u);
  EXPECT_EQ(decoded.value(*parent, "cpu_exclusive"), 30000000u);
  EXPECT_EQ(decoded.value(*parent, "cycles_inclusive"), 20000000u) << "counted in 5 of 10 calls: scaled by 2";
  EXPECT_EQ(decoded.value(*parent, "cycles_exclusive"), 12000000u);
  EXPECT_EQ(decoded.value(*parent, "page-faults_inclusive"), 7u) << "counted in every call: not scaled";
  const auto* other = decoded.find("parent", 101);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(decoded.value(*other, "cycles_inclusive"), 0u) << "never counted on that thread: nothing to scale";
  ASSERT_EQ(decoded.comments.size(), 1u);
  EXPECT_NE(decoded.comments[0].find("event cycles counted in 15 of 34 calls"), std::string::npos) << decoded.comments[0];
}

TEST(Pprof, UnavailableEventsAreLeftOutAndSaidSo) {
  std::string text = std::string(kHeader) +
      R"({"type":"warning","message":"--counters: event instructions not available on this machine (this machine has no hardware PMU for it); its counts are 0"})" "\n"
      R"({"type":"counters","tid":7,"function":"f","calls":3,"inclusive_ns":3000,"exclusive_ns":3000,"events":{"instructions":[0,0]},"elapsed_ns":1})" "\n";
  auto message = pprof_profile(parse(text));
  ASSERT_TRUE(message) << message.error();
  Decoded decoded = decode_profile(*message);
  EXPECT_EQ(decoded.types, (std::vector<std::string>{"calls", "cpu_inclusive", "cpu_exclusive", "samples"}));
  ASSERT_EQ(decoded.comments.size(), 1u);
  EXPECT_NE(decoded.comments[0].find("event instructions was not available on this machine"), std::string::npos);
}

TEST(Pprof, LineSamplesAreASampleTypeOfTheirOwn) {
  std::string text = std::string(kHeader) +
      R"({"type":"samples","counts":{"/src/a.c:12":40,"worker":2},"elapsed_ns":5})" "\n";
  auto message = pprof_profile(parse(text));
  ASSERT_TRUE(message) << message.error();
  Decoded decoded = decode_profile(*message);
  EXPECT_EQ(decoded.default_type, "samples");
  const auto* line = decoded.find("/src/a.c:12", 0);
  ASSERT_NE(line, nullptr);
  EXPECT_EQ(decoded.value(*line, "samples"), 40u);
  EXPECT_EQ(decoded.value(*line, "calls"), 0u);
  ASSERT_NE(decoded.find("worker", 0), nullptr);
}

TEST(Pprof, BranchEdgesAreSamplesAtTheBranchLineWithTheEdgeAsLabels) {
  // #11: `whatif export --pprof` carries the software branch records' edge counts as labels.
  std::vector<PprofEdge> edges = {{"/bin/p", 0x1140, 0x1120, "loop.c:12", "loop.c:9", 750},
                                  {"/bin/p", 0x1150, 0x1200, "loop.c:14", "0x1200", 30}};
  auto message = pprof_profile(parse(kHeader), edges);
  ASSERT_TRUE(message) << message.error();
  Decoded decoded = decode_profile(*message);
  EXPECT_EQ(decoded.default_type, "taken_branches") << "nothing else to show";
  const auto* back = decoded.find("loop.c:12", 0);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(decoded.value(*back, "taken_branches"), 750u);
  EXPECT_EQ(back->text_labels.at("to"), "loop.c:9");
  EXPECT_EQ(back->text_labels.at("object"), "/bin/p");
  EXPECT_EQ(back->labels.at("from_address"), 0x1140u);
  EXPECT_EQ(back->labels.at("to_address"), 0x1120u);
  const auto* out = decoded.find("loop.c:14", 0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->text_labels.at("to"), "0x1200") << "a target without a line keeps its address";
}

TEST(Pprof, AProfileWithNothingToExportIsAnErrorNamingTheFix) {
  auto message = pprof_profile(parse(kHeader));
  ASSERT_FALSE(message);
  EXPECT_NE(message.error().find("whatif run --counters"), std::string::npos) << message.error();
}

}  // namespace
}  // namespace whatif::counters
