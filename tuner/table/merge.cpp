// `tune merge`: tables grouped by card (gpu.name). A card's rows are the union of its tables' rows by problem
// name; one problem seen twice must agree (same shape and types, same winner or both none) unless the
// preference picks the first or the last input. Each merged table records every source in
// provenance.merged_from.
#include "tuner/table/merge.hpp"

#include <map>
#include <optional>
#include <string>

#include "tuner/common/error.hpp"

namespace tunefuzz {

namespace {

/// One table about to be merged: its parsed form (for comparing rows) and its document (written out).
struct Source {
  const ResultsTable* table;
  YAML::Node document;
};

/// One row kept for a card: parsed, as written, and the table it came from.
struct MergedRow {
  const TableRow* row;
  YAML::Node document;
  const ResultsTable* origin;
};

/// A card's tables and its merged rows, in first-seen order.
struct CardMerge {
  std::vector<Source> sources;
  std::vector<MergedRow> rows;
  std::map<std::string, size_t> index;  ///< problem name → position in rows
};

std::string winner_of(const TableRow& row) {
  return row.winner ? row.winner->id : std::string("no winner");
}

bool same_problem(const Problem& a, const Problem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.input == b.input && a.output == b.output &&
         a.layout == b.layout && a.alpha == b.alpha && a.beta == b.beta;
}

std::string shape(const Problem& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
         to_string(p.input) + "-" + to_string(p.output) + " " + to_string(p.layout);
}

/// Why two rows for one problem name cannot both stand, or nullopt when they agree.
std::optional<std::string> disagreement(const TableRow& kept, const TableRow& incoming) {
  if (!same_problem(kept.problem, incoming.problem))
    return "different problems under one name (" + shape(kept.problem) + " vs " + shape(incoming.problem) +
           ")";
  if (winner_of(kept) != winner_of(incoming))
    return "different winners (" + winner_of(kept) + " vs " + winner_of(incoming) + ")";
  return std::nullopt;
}

void add_row(CardMerge& card, const ResultsTable& table, const TableRow& row, const YAML::Node& document,
             MergePreference prefer) {
  const MergedRow incoming{&row, document, &table};
  const auto found = card.index.find(row.problem.name);
  if (found == card.index.end()) {
    card.index[row.problem.name] = card.rows.size();
    card.rows.push_back(incoming);
    return;
  }
  MergedRow& kept = card.rows[found->second];
  const auto conflict = disagreement(*kept.row, row);
  if (!conflict || prefer == MergePreference::first) return;
  if (prefer == MergePreference::none)
    throw Error(ErrorKind::bad_input,
                "problem '" + row.problem.name + "' on " + table.gpu_name + ": " +
                    kept.origin->file.string() + " and " + table.file.string() + " disagree: " + *conflict +
                    "; --prefer first or --prefer last picks one",
                {table.file.string(), 0, 0, "problems"});
  kept = incoming;
}

/// {file, tool_commit, date, command} of a source; a table merged before contributes its own sources.
void record_sources(const Source& source, YAML::Node& merged_from) {
  const YAML::Node earlier = source.document["provenance"]["merged_from"];
  if (earlier && earlier.IsSequence()) {
    for (const YAML::Node& entry : earlier) merged_from.push_back(YAML::Clone(entry));
    return;
  }
  YAML::Node entry;
  entry["file"] = source.table->file.string();
  entry["tool_commit"] = source.table->tool_commit;
  entry["date"] = source.table->date;
  entry["command"] = source.table->command;
  merged_from.push_back(entry);
}

/// The first table's document with the merged rows and every source in provenance.merged_from.
YAML::Node merged_table(const CardMerge& card) {
  YAML::Node table = YAML::Clone(card.sources.front().document);
  YAML::Node problems(YAML::NodeType::Sequence);
  for (const MergedRow& kept : card.rows) problems.push_back(YAML::Clone(kept.document));
  table["problems"] = problems;
  YAML::Node merged_from(YAML::NodeType::Sequence);
  for (const Source& source : card.sources) record_sources(source, merged_from);
  table["provenance"]["merged_from"] = merged_from;
  return table;
}

}  // namespace

YAML::Node merge_tables(const std::vector<TableSet>& inputs, MergePreference prefer) {
  std::vector<std::string> order;  // cards, first seen first
  std::map<std::string, CardMerge> cards;
  for (const TableSet& set : inputs) {
    for (size_t t = 0; t < set.tables.size(); ++t) {
      const ResultsTable& table = set.tables[t];
      const YAML::Node document = set.documents.at(t);
      if (!cards.count(table.gpu_name)) order.push_back(table.gpu_name);
      CardMerge& card = cards[table.gpu_name];
      card.sources.push_back({&table, document});
      const YAML::Node problems = document["problems"];
      for (size_t r = 0; r < table.rows.size(); ++r) add_row(card, table, table.rows[r], problems[r], prefer);
    }
  }
  if (order.empty()) throw Error(ErrorKind::bad_input, "nothing to merge: no tables");
  if (order.size() == 1) return merged_table(cards.at(order.front()));
  YAML::Node collection;
  collection["format"] = kCollectionFormat;
  for (const std::string& name : order) collection["tables"].push_back(merged_table(cards.at(name)));
  return collection;
}

}  // namespace tunefuzz
