// `tune merge`: combines results tables. Tables of one card become one table (rows of different problems
// side by side); tables of different cards become a collection. Two rows for one problem on one card with
// different winners conflict and are refused unless `prefer` says which input wins.
#pragma once

#include <filesystem>
#include <vector>

#include "tuner/table/table_set.hpp"

namespace tunefuzz {

enum class MergePreference { none, first, last };

/// Throws Error{bad_input} naming the problem and both inputs on a conflict with MergePreference::none.
YAML::Node merge_tables(const std::vector<TableSet>& inputs, MergePreference prefer);

}  // namespace tunefuzz
