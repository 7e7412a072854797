#include "tuner/campaign/strategy_replay.hpp"

#include <algorithm>
#include <map>

#include "tuner/campaign/journal.hpp"
#include "tuner/common/error.hpp"
#include "tuner/common/hash.hpp"
#include "tuner/common/input_file.hpp"
#include "tuner/common/version.hpp"

namespace tunefuzz {

std::vector<RecordedProblem> recorded_timings(const std::filesystem::path& path, const Config& config) {
  const Journal journal = Journal::read_recorded(path);
  std::vector<RecordedProblem> out;
  for (const Problem& problem : config.problems) {
    const auto event = journal.timed(problem.name);
    if (!event) continue;
    const TimeResult result = time_result_from_yaml((*event)["timing"]);
    const int64_t rounds = (*event)["rounds"] ? (*event)["rounds"].as<int64_t>() : 0;
    out.push_back({problem, result.entries, result.baseline, rounds});
  }
  return out;
}

namespace {

bool measured_ok(const TimedEntry& e) {
  return e.status == "timed" || e.status == "screened";
}

// A round answered from the record.
class RecordedMeasurer {
 public:
  explicit RecordedMeasurer(const RecordedProblem& recorded) : recorded_(recorded) {
    for (const TimedEntry& e : recorded.entries) by_id_[e.id] = &e;
  }

  TimeResult measure(const MeasureRound& round) const {
    TimeResult result;
    if (round.baseline) {
      result.baseline = recorded_.baseline;
      result.baseline.interleaved_median_ms = result.baseline.interleaved_spread = 0;
    }
    std::map<std::string, TimedEntry> entries;
    const auto plain = [&](const std::string& id, const char* status) {
      TimedEntry e = *by_id_.at(id);
      // A screen is answered with the recorded screen where the record kept one beside a full timing.
      if (measured_ok(e) && std::string(status) == "screened" && e.screen_ms > 0) e.median_ms = e.screen_ms;
      if (measured_ok(e)) e.status = status;
      e.interleaved_median_ms = e.interleaved_spread = e.screen_ms = 0;
      entries[id] = e;
    };
    for (const std::string& id : round.screen) plain(id, "screened");
    for (const std::string& id : round.time) plain(id, "timed");
    turns(round, entries, result.baseline);
    for (auto& [id, e] : entries) result.entries.push_back(e);
    return result;
  }

 private:
  // Turn-taking figures: the recorded ones when every candidate of the round has one, else every
  // candidate's (and cuBLAS's) sequential median, so that figures of one kind are compared.
  void turns(const MeasureRound& round, std::map<std::string, TimedEntry>& entries,
             TimedEntry& baseline) const {
    if (round.interleave.empty()) return;
    const bool recorded_turns =
        std::all_of(round.interleave.begin(), round.interleave.end(),
                    [&](const std::string& id) { return by_id_.at(id)->interleaved_median_ms > 0; }) &&
        (!round.interleave_baseline || recorded_.baseline.interleaved_median_ms > 0);
    for (const std::string& id : round.interleave) {
      const TimedEntry& r = *by_id_.at(id);
      TimedEntry& e = entries.count(id) ? entries[id] : entries[id] = r;
      e.interleaved_median_ms = recorded_turns ? r.interleaved_median_ms : r.median_ms;
      e.interleaved_spread = recorded_turns ? r.interleaved_spread : 0;
    }
    if (round.interleave_baseline) {
      const TimedEntry& r = recorded_.baseline;
      baseline.id = r.id;
      baseline.interleaved_median_ms = recorded_turns ? r.interleaved_median_ms : r.median_ms;
      baseline.interleaved_spread = recorded_turns ? r.interleaved_spread : 0;
    }
  }

  const RecordedProblem& recorded_;
  std::map<std::string, const TimedEntry*> by_id_;
};

SearchState initial_state(const RecordedProblem& recorded, const GpuLimits& limits) {
  SearchState state;
  state.problem = recorded.problem;
  state.shape = shape_of(recorded.problem);
  state.limits = limits;
  for (const TimedEntry& e : recorded.entries)
    state.candidates.push_back({parse_candidate_id(e.id), e.id, 0});
  return state;
}

void set_winner(ReplayOutcome& out, const TimedEntry* winner, const RecordedProblem& recorded) {
  if (!winner) return;
  out.winner = winner->id;
  for (const TimedEntry& e : recorded.entries)
    if (e.id == winner->id) {
      out.winner_ms = e.median_ms;
      out.winner_recorded_in_full = e.status == "timed";
    }
}

}  // namespace

TimeResult recorded_answer(const RecordedProblem& recorded, const MeasureRound& round) {
  return RecordedMeasurer(recorded).measure(round);
}

ReplayOutcome replay(const RecordedProblem& recorded, StrategyKind kind, const SearchSettings& settings,
                     const GpuLimits& limits) {
  SearchState state = initial_state(recorded, limits);
  const RecordedMeasurer measurer(recorded);
  const std::unique_ptr<SearchStrategy> strategy = make_strategy(kind, settings);
  while (const std::optional<MeasureRound> round = strategy->next(state)) {
    // A round with the baseline's turn but no baseline timed yet cannot run; strategies never ask for one.
    absorb(state, *round, measurer.measure(*round), settings);
  }
  ReplayOutcome out;
  out.problem = recorded.problem.name;
  out.strategy = kind;
  out.candidates = static_cast<int64_t>(state.candidates.size());
  out.rounds = state.rounds;
  out.evaluations = state.evaluations;
  out.launches = state.launches;
  const std::vector<TimedEntry> entries = measured_entries(state);
  set_winner(out, choose_winner(entries), recorded);
  return out;
}

ReplayOutcome recorded_outcome(const RecordedProblem& recorded, const SearchSettings& settings) {
  ReplayOutcome out;
  out.problem = recorded.problem.name;
  out.candidates = static_cast<int64_t>(recorded.entries.size());
  int64_t screened = 0, timed = 0, turns = 0;
  for (const TimedEntry& e : recorded.entries) {
    screened += measured_ok(e);
    timed += e.status == "timed";
    turns += e.interleaved_median_ms > 0;
  }
  out.rounds = recorded.rounds > 0 ? recorded.rounds : turns > 0 ? 3 : 2;
  out.evaluations = screened + timed + turns;
  out.launches = screened * settings.screen_repeats + (timed + turns) * settings.repeats;
  set_winner(out, choose_winner(recorded.entries), recorded);
  return out;
}

}  // namespace tunefuzz

namespace tunefuzz {

ReplayReport replay_journal(const std::filesystem::path& journal, const Config& config,
                            const std::vector<StrategyKind>& strategies) {
  ReplayReport report;
  report.card = config.gpu.name;
  report.journal = journal;
  report.journal_sha256 = sha256_hex(read_input_file(journal, "journal", kTableByteLimit));
  report.strategies = strategies;
  const SearchSettings settings{config.budgets.timing_finalists, config.budgets.timing_screen_repeats,
                                config.budgets.timing_repeats};
  for (const RecordedProblem& recorded : recorded_timings(journal, config)) {
    ReplayReport::Row row{recorded_outcome(recorded, settings), {}};
    for (StrategyKind kind : strategies)
      row.strategies.push_back(replay(recorded, kind, settings, config.gpu.limits));
    report.rows.push_back(std::move(row));
  }
  if (report.rows.empty())
    throw Error(ErrorKind::bad_input, "the journal " + journal.string() +
                                          " holds no timing of any problem of " + config.file.string());
  return report;
}

namespace {

YAML::Node outcome_node(const ReplayOutcome& o, const ReplayOutcome& recorded) {
  YAML::Node n;
  n["strategy"] = to_string(o.strategy);
  n["rounds"] = o.rounds;
  n["evaluations"] = o.evaluations;
  n["launches"] = o.launches;
  n["evaluations_share"] =
      recorded.evaluations > 0 ? double(o.evaluations) / double(recorded.evaluations) : 0.0;
  n["winner"] = o.winner;
  n["winner_ms"] = o.winner_ms;
  n["winner_recorded_in_full"] = o.winner_recorded_in_full;
  n["time_vs_recorded_winner"] = recorded.winner_ms > 0 ? o.winner_ms / recorded.winner_ms : 0.0;
  return n;
}

}  // namespace

std::vector<ReplaySummary> summarise(const ReplayReport& report) {
  std::vector<ReplaySummary> out;
  for (size_t i = 0; i < report.strategies.size(); ++i) {
    ReplaySummary s;
    s.strategy = report.strategies[i];
    for (const ReplayReport::Row& row : report.rows) {
      const ReplayOutcome& o = row.strategies[i];
      s.evaluations += o.evaluations;
      s.recorded_evaluations += row.recorded.evaluations;
      s.worst_share = std::max(
          s.worst_share, double(o.evaluations) / double(std::max<int64_t>(1, row.recorded.evaluations)));
      if (row.recorded.winner_ms > 0)
        s.worst_time = std::max(s.worst_time, o.winner_ms / row.recorded.winner_ms);
    }
    out.push_back(s);
  }
  return out;
}

YAML::Node to_yaml(const ReplayReport& report, const std::string& command) {
  YAML::Node out;
  out["format"] = "tunefuzz-strategy-replay/1";
  out["note"] =
      "a replay of recorded timings, no GPU: each strategy's rounds are answered with the figures the "
      "journal's exhaustive campaign measured (a screen returns the candidate's recorded screen where the "
      "journal kept one beside its full timing, else its one recorded median; launch noise is not "
      "modelled)";
  out["card"] = report.card;
  out["journal"] = report.journal.string();
  out["journal_sha256"] = report.journal_sha256;
  out["tool_commit"] = tool_commit();
  out["command"] = command;
  for (const ReplayReport::Row& row : report.rows) {
    YAML::Node problem;
    problem["problem"] = row.recorded.problem;
    problem["candidates"] = row.recorded.candidates;
    YAML::Node recorded = outcome_node(row.recorded, row.recorded);
    recorded["strategy"] = "recorded (exhaustive, as the campaign ran)";
    problem["recorded"] = recorded;
    for (const ReplayOutcome& o : row.strategies)
      problem["replayed"].push_back(outcome_node(o, row.recorded));
    out["problems"].push_back(problem);
  }
  for (const ReplaySummary& s : summarise(report)) {
    YAML::Node n;
    n["strategy"] = to_string(s.strategy);
    n["evaluations"] = s.evaluations;
    n["recorded_evaluations"] = s.recorded_evaluations;
    n["worst_share_of_evaluations"] = s.worst_share;
    n["worst_time_vs_recorded_winner"] = s.worst_time;
    out["summary"].push_back(n);
  }
  return out;
}

}  // namespace tunefuzz
