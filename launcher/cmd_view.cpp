// `whatif view PROFILE... [-o out.html]`: writes one self-contained HTML page, the built viewer with
// the profiles embedded as JSON (every '<' escaped, so no profile text can close the script element).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analysis/profile/profile.h"
#include "commands.h"
#include "launcher_paths.h"
#include "whatif/environment.h"

namespace whatif::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kViewerFile = "whatif-viewer.html";
/// The element the viewer reads embedded profiles from; the built page carries it with "[]".
constexpr const char* kSlotOpen = "<script id=\"whatif-profiles\" type=\"application/json\">";
constexpr const char* kSlotClose = "</script>";

struct ViewArgs {
  std::vector<std::string> profiles;
  std::string output;
};

/// Where the built viewer may be: $WHATIF_VIEWER_HTML, next to this executable (the build tree),
/// ../share/whatif (an install), the source tree's viewer/dist (a manual `npm run build`).
std::vector<fs::path> viewer_candidates() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(environment::kViewerHtml); env && *env) candidates.emplace_back(env);
  if (fs::path directory = launcher_directory(); !directory.empty()) {
    candidates.push_back(directory / kViewerFile);
    candidates.push_back(directory.parent_path() / "share" / "whatif" / kViewerFile);
  }
  candidates.push_back(fs::path(WHATIF_SOURCE_DIR) / "viewer" / "dist" / kViewerFile);
  return candidates;
}

bool read_file(const fs::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

/// JSON safe inside a <script> element: '<', '>' and '&' only occur in strings, so \u escapes keep it valid.
std::string script_safe_json(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string safe;
  safe.reserve(text.size() + text.size() / 16);
  for (char c : text) {
    if (c == '<') safe += "\\u003c";
    else if (c == '>') safe += "\\u003e";
    else if (c == '&') safe += "\\u0026";
    else safe += c;
  }
  return safe;
}

int run_view(const ViewArgs& args) {
  std::string page;
  fs::path found;
  for (const fs::path& candidate : viewer_candidates()) {
    if (read_file(candidate, page)) {
      found = candidate;
      break;
    }
  }
  if (found.empty()) {
    fmt::print(stderr,
               "whatif view: the viewer page ({}) was not built: it needs node and npm at build time. "
               "Run scripts/install-deps.sh and rebuild (cmake --build <dir>), or `cd viewer && npm ci && "
               "npm run build`, or point WHATIF_VIEWER_HTML at a built page.\n",
               kViewerFile);
    return 1;
  }
  size_t open = page.find(kSlotOpen);
  size_t close = open == std::string::npos ? open : page.find(kSlotClose, open);
  if (close == std::string::npos) {
    fmt::print(stderr, "whatif view: {} has no profile slot (<script id=\"whatif-profiles\">): rebuild the viewer\n",
               found.string());
    return 1;
  }

  nlohmann::json embedded = nlohmann::json::array();
  for (const std::string& path : args.profiles) {
    std::string text;
    if (!read_file(path, text)) {
      fmt::print(stderr, "whatif view: cannot read {}: {}\n", path, std::strerror(errno));
      return 1;
    }
    if (auto parsed = analysis::parse_profile(text, path); !parsed)
      fmt::print(stderr, "whatif view: warning: {} (the page will show this too)\n", parsed.error());
    embedded.push_back({{"name", fs::path(path).filename().string()}, {"text", std::move(text)}});
  }

  fs::path output = args.output;
  if (output.empty()) {
    output = fs::path(args.profiles.front()).filename();
    output.replace_extension(".html");
  }
  size_t payload = open + std::string_view(kSlotOpen).size();
  page.replace(payload, close - payload, script_safe_json(embedded));
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  out.write(page.data(), static_cast<std::streamsize>(page.size()));
  out.close();
  if (!out) {
    fmt::print(stderr, "whatif view: cannot write {}: {}\n", output.string(), std::strerror(errno));
    return 1;
  }
  std::error_code error;
  fs::path absolute = fs::absolute(output, error);
  fmt::print("{}\n", (error ? output : absolute).string());
  return 0;
}

}  // namespace

void register_view(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ViewArgs>();
  CLI::App* view = app.add_subcommand(
      "view", "Write a self-contained HTML page (open it in any browser) showing the profiles' speedup plots");
  view->add_option("profiles", args->profiles, "Profiles to show together: whatif, Coz text or Coz JSON Lines")
      ->required()
      ->check(CLI::ExistingFile);
  view->add_option("-o,--output", args->output, "Output HTML file (default: the first profile's name with .html)");
  view->callback([&commands, args] { commands.run = [args] { return run_view(*args); }; });
}

}  // namespace whatif::cli
