#include "tuner/strategy/search.hpp"

#include <algorithm>
#include <tuple>

namespace tunefuzz {

int64_t MeasureRound::evaluations() const {
  return static_cast<int64_t>(screen.size() + time.size() + interleave.size());
}

namespace {

bool contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

void absorb(SearchState& state, const MeasureRound& round, const TimeResult& result,
            const SearchSettings& settings) {
  if (round.baseline) state.baseline = result.baseline;
  if (round.interleave_baseline && result.baseline.interleaved_median_ms > 0) {
    state.baseline.interleaved_median_ms = result.baseline.interleaved_median_ms;
    state.baseline.interleaved_spread = result.baseline.interleaved_spread;
  }
  for (const TimedEntry& entry : result.entries) {
    TimedEntry& kept = state.entries[entry.id];
    // A candidate only re-timed in turns keeps its own full timing and takes the turn-taking figures.
    if (contains(round.interleave, entry.id) && !contains(round.time, entry.id) && kept.status == "timed") {
      kept.interleaved_median_ms = entry.interleaved_median_ms;
      kept.interleaved_spread = entry.interleaved_spread;
      continue;
    }
    // A full timing after a screen keeps the screen's figure beside it (TimedEntry::screen_ms).
    const double screen = kept.status == "screened" ? kept.median_ms : kept.screen_ms;
    kept = entry;
    if (entry.status != "screened" && kept.screen_ms == 0) kept.screen_ms = screen;
    if (entry.status == "screened") kept.screen_ms = 0;
    if (entry.status == "screened" && contains(round.screen, entry.id))
      state.screens[entry.id] = entry.median_ms;
  }
  const int64_t screen_repeats = round.screen_repeats > 0 ? round.screen_repeats : settings.screen_repeats;
  state.evaluations += round.evaluations();
  state.launches += static_cast<int64_t>(round.screen.size()) * screen_repeats +
                    static_cast<int64_t>(round.time.size() + round.interleave.size()) * settings.repeats;
  ++state.rounds;
}

std::vector<TimedEntry> measured_entries(const SearchState& state) {
  std::vector<TimedEntry> out;
  for (const SearchCandidate& c : state.candidates)
    if (const auto it = state.entries.find(c.id); it != state.entries.end()) out.push_back(it->second);
  return out;
}

const TimedEntry* choose_winner(const std::vector<TimedEntry>& entries) {
  // Comparing a turn-taking figure with another candidate's sequential median would let the card's drift
  // between the two rounds choose.
  const bool turns = std::any_of(entries.begin(), entries.end(), [](const TimedEntry& e) {
    return e.status == "timed" && e.interleaved_median_ms > 0;
  });
  const auto figure = [turns](const TimedEntry& e) { return turns ? e.interleaved_median_ms : e.median_ms; };
  const TimedEntry* best = nullptr;
  for (const TimedEntry& e : entries)
    if (e.status == "timed" && figure(e) > 0 && (!best || figure(e) < figure(*best))) best = &e;
  if (!best || best->interleaved_median_ms <= 0) return best;
  const double tolerance = std::max(0.01, best->interleaved_spread) * best->interleaved_median_ms;
  const auto cost = [](const TimedEntry& e) {
    const Candidate c = parse_candidate_id(e.id);
    const KernelTemplate& t = *c.kernel_template;
    const int64_t stages = t.parameter("STAGES") ? c.point["STAGES"] : 0;
    return std::make_tuple(stages, t.shared_memory_bytes(c.point), e.id);
  };
  const TimedEntry* chosen = best;
  for (const TimedEntry& e : entries)
    if (e.status == "timed" && e.interleaved_median_ms > 0 && figure(e) <= figure(*best) + tolerance &&
        cost(e) < cost(*chosen))
      chosen = &e;
  return chosen;
}

std::vector<std::string> close_to_best(const SearchState& state, double fraction) {
  double best = 0;
  for (const auto& [id, e] : state.entries)
    if (e.status == "timed" && (best == 0 || e.median_ms < best)) best = e.median_ms;
  std::vector<std::string> out;
  for (const SearchCandidate& c : state.candidates)
    if (const auto it = state.entries.find(c.id); it != state.entries.end() && it->second.status == "timed" &&
                                                  it->second.median_ms <= best * (1 + fraction))
      out.push_back(c.id);
  return out;
}

std::vector<std::string> by_screen(const SearchState& state) {
  std::vector<std::string> out;
  for (const SearchCandidate& c : state.candidates)
    if (state.screens.count(c.id)) out.push_back(c.id);
  std::stable_sort(out.begin(), out.end(), [&](const std::string& x, const std::string& y) {
    return state.screens.at(x) < state.screens.at(y);
  });
  return out;
}

}  // namespace tunefuzz
