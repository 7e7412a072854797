// `tune run` as a library: the stages after compilation, in order, over a prepared config on a GPU that was
// found. Every candidate is fuzzed (the config's screen of cases, or its whole budget), each problem's
// candidates are timed as the search strategy asks, each winner gets its full fuzz budget (with a screen) and
// the sanitizers before it enters the table, and a winner either check demotes is replaced by the next. Every
// step goes to a journal beside the table (`resume` takes the finished ones from it) and to the verdict store,
// so a campaign redoes only what changed. It writes the results table and its stage summary; a problem
// without a winner gets no row and fails the campaign, with its reason. The CLI finds the config and the GPU,
// prints and exits.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tuner/campaign/problem_coverage.hpp"
#include "tuner/campaign/session.hpp"
#include "tuner/config/strategy_kind.hpp"

namespace tunefuzz {

class VerdictStore;

struct TuneSettings {
  std::filesystem::path output;          ///< the table; its stage summary and journal go beside it
  std::filesystem::path work_directory;  ///< worker jobs, replays and reproducers
  std::string command_line;              ///< for the table's provenance
  std::string config_sha256;             ///< of the config's text: a journal of another config is refused
  bool resume = false;                   ///< carry on the campaign the journal holds
  bool retry_quarantined = false;        ///< fuzz and time again what was running at two kills in a row
  std::optional<StrategyKind> strategy;  ///< unset: the config's budgets.strategy
  std::optional<int> time_workers;       ///< problems timed at once per GPU; unset: budgets.time_workers
  bool sanitize = true;                  ///< replay each winner under compute-sanitizer's tools
  const VerdictStore* store = nullptr;   ///< verdicts of earlier campaigns; nullptr: none (--no-store)
  int jobs = 0;                          ///< compile threads for the winners' twins (0: every core)
  std::vector<Gpu> gpus;                 ///< `--gpus`: a pool per GPU (empty: the one this process sees)
};

struct TuneReport {
  std::vector<ProblemTiming> timings;     ///< every problem's, in the config's order
  std::vector<FuzzedCandidate> fuzzed;    ///< every candidate's fuzzing, confirmations included
  std::vector<std::string> no_winner;     ///< a line for each problem without a winner, with its reason
  YAML::Node summary;                     ///< the stage summary written beside the table
  std::string domain_coverage;            ///< the domain classes the passing candidates' cases reached
  bool succeeded() const { return no_winner.empty(); }
};

/// Runs the campaign over `prepared` on `device` and writes the table and its stage summary. `coverage` is
/// candidates_per_problem of the same config and space (what says why a problem got no winner). Throws
/// Error{bad_input} naming the journal when asked to resume one of another campaign.
TuneReport tune_campaign(const Prepared& prepared, const std::vector<ProblemCandidates>& coverage,
                         const DeviceInfo& device, const TuneSettings& settings);

}  // namespace tunefuzz
