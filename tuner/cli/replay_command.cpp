#include "tuner/cli/replay_command.hpp"

#include <cstdio>

#include "tuner/common/error.hpp"
#include "tuner/campaign/strategy_replay.hpp"
#include "tuner/table/json.hpp"

namespace tunefuzz::cli {

namespace {

std::vector<StrategyKind> parse_strategies(const std::vector<std::string>& names) {
  if (names.empty()) return all_strategies();
  std::vector<StrategyKind> out;
  for (const std::string& name : names) {
    const auto kind = parse_strategy(name);
    if (!kind) throw Error(ErrorKind::bad_input, "--strategy '" + name + "': expected " + strategy_names());
    out.push_back(*kind);
  }
  return out;
}

void print(const ReplayReport& report) {
  std::printf("replay of recorded timings (no GPU): %s, recorded on %s\n", report.journal.c_str(),
              report.card.c_str());
  std::printf("%-24s %5s %-10s %6s %6s %8s  %s\n", "problem", "cands", "strategy", "evals", "share",
              "time", "winner");
  for (const ReplayReport::Row& row : report.rows) {
    const ReplayOutcome& base = row.recorded;
    std::printf("%-24s %5lld %-10s %6lld %6.2f %8.3f  %s\n", base.problem.c_str(),
                static_cast<long long>(base.candidates), "recorded", static_cast<long long>(base.evaluations), 1.0,
                1.0, base.winner.c_str());
    for (const ReplayOutcome& o : row.strategies)
      std::printf("%-24s %5s %-10s %6lld %6.2f %8.3f  %s\n", "", "", to_string(o.strategy),
                  static_cast<long long>(o.evaluations),
                  base.evaluations ? double(o.evaluations) / double(base.evaluations) : 0.0,
                  base.winner_ms > 0 ? o.winner_ms / base.winner_ms : 0.0,
                  o.winner == base.winner ? "(the recorded winner)" : o.winner.c_str());
  }
  for (const ReplaySummary& s : summarise(report))
    std::printf("%-10s %zu problems: %lld evaluations of the recorded %lld; at most %.2f of a problem's, winner "
                "at most %.3f x the recorded winner's time\n",
                to_string(s.strategy), report.rows.size(), static_cast<long long>(s.evaluations),
                static_cast<long long>(s.recorded_evaluations), s.worst_share, s.worst_time);
}

}  // namespace

int replay(const std::string& config_file, const std::string& journal, const std::vector<std::string>& strategies,
           const std::string& output, bool json, const std::string& command_line) {
  const std::vector<StrategyKind> kinds = parse_strategies(strategies);
  const Config config = load_config(config_file);
  const ReplayReport report = replay_journal(journal, config, kinds);
  const YAML::Node document = to_yaml(report, command_line);
  if (!output.empty()) write_yaml(output, document);
  if (json)
    std::fputs(to_json(document).c_str(), stdout);
  else
    print(report);
  return 0;
}

}  // namespace tunefuzz::cli
