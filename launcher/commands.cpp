// The list of subcommands the `whatif` launcher offers, in the order `whatif --help` shows them.
#include "commands.h"

namespace whatif::cli {

void register_commands(CLI::App& app, Commands& commands) {
  register_run(app, commands);
  register_lines(app, commands);
  register_report(app, commands);
  register_stats(app, commands);
  register_view(app, commands);
  register_stat(app, commands);
  register_export(app, commands);
  register_ctl(app, commands);
}

}  // namespace whatif::cli
