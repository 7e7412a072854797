#include "tuner/table/table_set.hpp"

#include "runtime/dispatch/results_reader.hpp"
#include "tuner/table/results_table.hpp"

namespace tunefuzz {

namespace {

// The tables of a parsed file: one, or a collection's list.
TableSet read_documents(const YAML::Node& root, const std::string& name) {
  TableSet set;
  try {
    if (root.IsMap() && root["format"] && root["format"].IsScalar() &&
        root["format"].Scalar() == kCollectionFormat) {
      const YAML::Node tables = root["tables"];
      if (!tables || !tables.IsSequence() || tables.size() == 0)
        throw Error(ErrorKind::bad_input, "a collection holds a non-empty list 'tables'",
                    {name, root.Mark().line + 1, root.Mark().column + 1, "tables"});
      for (size_t i = 0; i < tables.size(); ++i) {
        set.tables.push_back(parse_results_table_node(tables[i], name, "tables[" + std::to_string(i) + "]"));
        set.documents.push_back(tables[i]);
      }
      return set;
    }
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::bad_input, e.msg, {name, e.mark.line + 1, e.mark.column + 1, ""});
  }
  set.tables.push_back(parse_results_table_node(root, name, ""));
  set.documents.push_back(root);
  return set;
}

}  // namespace

TableSet read_table_set(const std::filesystem::path& file) {
  const std::string name = file.string();
  int64_t rows = 0;
  const YAML::Node root = load_table_file(file, rows);
  TableSet set = read_documents(root, name);
  int64_t read = 0;
  for (const ResultsTable& table : set.tables) read += static_cast<int64_t>(table.rows.size());
  check_row_count(file, rows, read);
  return set;
}

}  // namespace tunefuzz
