#include "tuner/table/staleness.hpp"

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "runtime/backend/compile_candidate.hpp"
#include "runtime/backend/compiler_for.hpp"
#include "runtime/backend/elf_image.hpp"

namespace tunefuzz {

namespace {

// The tree's source of a template, loaded once per file (the fp8 and tf32 families share gemm_wgmma.cu's).
const KernelSource& tree_source(std::map<std::string, KernelSource>& sources,
                                const std::filesystem::path& template_directory, const KernelTemplate& t) {
  auto source = sources.find(t.source_file);
  if (source == sources.end())
    source = sources.emplace(t.source_file, KernelSource::load(template_directory, t.source_file)).first;
  return source->second;
}

// The compiler for the table's GPU; null, with the reason in `why`, where this tool has none.
std::unique_ptr<Compiler> table_compiler(const ResultsTable& table, std::string& why) {
  try {
    return compiler_for(GpuSpec{table.gpu_name, table.gpu_arch, {}, {}, {}});
  } catch (const Error& e) {
    why = e.message();
    return nullptr;
  }
}

}  // namespace

std::vector<TemplateChange> template_changes(const ResultsTable& table,
                                             const std::filesystem::path& template_directory,
                                             const KernelCache& cache) {
  std::map<std::string, KernelSource> sources;
  std::map<std::string, TemplateChange> changes;
  for (const auto& [name, hash] : table.template_hashes) {
    const KernelTemplate& t =
        find_template(name, {table.file.string(), 0, 0, "provenance.template_hashes." + name});
    const std::string tree_hash = tree_source(sources, template_directory, t).hash();
    if (tree_hash != hash) changes[name] = {name, hash, tree_hash, 0, {}};
  }
  if (changes.empty()) return {};
  std::string no_compiler;
  const std::unique_ptr<Compiler> compiler = table_compiler(table, no_compiler);
  if (!compiler) no_compiler = "cannot be compiled here to compare: " + no_compiler;
  std::set<std::string> seen;
  for (const TableRow& row : table.rows) {
    if (!row.winner || !seen.insert(row.winner->id).second) continue;
    const auto change = changes.find(row.winner->template_name);
    if (change == changes.end()) continue;
    TemplateChange& c = change->second;
    ++c.winners;
    std::string why = no_compiler;
    if (why.empty()) {
      const Candidate candidate = parse_candidate_id(row.winner->id);
      const KernelSource& source = sources.at(candidate.kernel_template->source_file);
      try {
        why = code_difference(row.winner->code_sha256,
                              compile_candidate(candidate, table.gpu_arch, source, *compiler, cache).image);
      } catch (const Error& e) {
        why = "the tree does not compile it: " + e.message();
      }
    }
    if (!why.empty()) c.changed.push_back(row.winner->id + ": " + why);
  }
  std::vector<TemplateChange> out;
  for (auto& [name, c] : changes) out.push_back(std::move(c));
  return out;
}

DigestBackfill missing_code_digests(const ResultsTable& table,
                                    const std::filesystem::path& template_directory,
                                    const KernelCache& cache) {
  DigestBackfill out;
  std::map<std::string, KernelSource> sources;
  std::string no_compiler;
  const std::unique_ptr<Compiler> compiler = table_compiler(table, no_compiler);
  if (!compiler)
    no_compiler = "cannot be compiled here: " + no_compiler;
  else if (table.compiler.empty())
    no_compiler = "the table does not say which compiler built it";
  else if (compiler->version() != table.compiler)
    no_compiler = "built by " + table.compiler + ", this tool compiles with " + compiler->version();
  std::set<std::string> seen;
  for (const TableRow& row : table.rows) {
    if (!row.winner || !row.winner->code_sha256.empty() || !seen.insert(row.winner->id).second) continue;
    const std::string& id = row.winner->id;
    if (!no_compiler.empty()) {
      out.skipped.push_back(id + ": " + no_compiler);
      continue;
    }
    try {
      const Candidate candidate = parse_candidate_id(id);
      const KernelTemplate& t = *candidate.kernel_template;
      const auto recorded = table.template_hashes.find(t.name);
      const KernelSource& source = tree_source(sources, template_directory, t);
      if (recorded == table.template_hashes.end()) {
        out.skipped.push_back(id + ": the table records no source hash of " + t.name);
      } else if (recorded->second != source.hash()) {
        out.skipped.push_back(id + ": " + t.name +
                              "'s source in the tree is not the one the table was tuned with");
      } else {
        out.digests[id] =
            code_sha256(compile_candidate(candidate, table.gpu_arch, source, *compiler, cache).image);
      }
    } catch (const Error& e) {
      out.skipped.push_back(id + ": " + e.message());
    }
  }
  return out;
}

namespace {

size_t indentation(const std::string& line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string::npos ? line.size() : first;
}

bool blank_or_comment(const std::string& line) {
  const size_t first = line.find_first_not_of(' ');
  return first == std::string::npos || line[first] == '#';
}

}  // namespace

std::string with_code_digests(const std::string& text, const std::map<std::string, std::string>& digests,
                              const std::string& file_name) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out += lines[i] + "\n";
    const std::string& line = lines[i];
    const size_t indent = indentation(line);
    if (blank_or_comment(line) || line.compare(indent, std::string::npos, "winner:") != 0) continue;
    // The winner's block: the lines after it indented deeper than it.
    size_t end = i + 1;
    while (end < lines.size() && (blank_or_comment(lines[end]) || indentation(lines[end]) > indent)) ++end;
    std::string id, key_indent;
    bool has_digest = false;
    size_t last = i;
    for (size_t j = i + 1; j < end; ++j) {
      if (blank_or_comment(lines[j])) continue;
      last = j;
      const size_t at = indentation(lines[j]);
      if (key_indent.empty()) key_indent = std::string(at, ' ');
      if (at != key_indent.size()) continue;
      if (lines[j].compare(at, 4, "id: ") == 0) id = lines[j].substr(at + 4);
      if (lines[j].compare(at, 13, "code_sha256: ") == 0) has_digest = true;
    }
    for (size_t j = i + 1; j <= last; ++j) out += lines[j] + "\n";
    const auto digest = digests.find(id);
    if (!has_digest && digest != digests.end()) out += key_indent + "code_sha256: " + digest->second + "\n";
    for (size_t j = last + 1; j < end; ++j) out += lines[j] + "\n";
    i = end - 1;
  }
  // It must read back as the same table with those digests.
  const ResultsTable back = parse_results_table(out, file_name);
  for (const TableRow& row : back.rows)
    if (row.winner && digests.count(row.winner->id) && row.winner->code_sha256 != digests.at(row.winner->id))
      throw Error(ErrorKind::bad_input,
                  "cannot add the code digest of " + row.winner->id +
                      ": the table is not laid out as tune writes tables",
                  {file_name, 0, 0, "problems"});
  return out;
}

}  // namespace tunefuzz
