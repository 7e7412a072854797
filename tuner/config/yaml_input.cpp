#include "tuner/config/yaml_input.hpp"

#include <yaml-cpp/eventhandler.h>

#include <map>
#include <sstream>
#include <vector>

#include "tuner/common/error.hpp"
#include "tuner/common/input_file.hpp"

namespace tunefuzz {

namespace {

SourceLocation at(const std::string& file, const YAML::Mark& mark) {
  if (mark.is_null() || mark.line < 0) return {file, 0, 0, ""};
  return {file, mark.line + 1, mark.column + 1, ""};
}

/// Whether a quoted scalar opening at `open` (a ' or ") is closed before the end of the text. yaml-cpp 0.7
/// ends an unclosed quoted scalar at the end of the input without complaint, so the rest of the document
/// silently becomes one string.
bool quote_closes(const std::string& text, size_t open) {
  const char quote = text[open];
  for (size_t i = open + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;
      continue;
    }
    if (text[i] != quote) continue;
    if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
      ++i;  // '' is an escaped quote
      continue;
    }
    return true;
  }
  return false;
}

/// Counts the nodes of one document as a reader walking it would meet them: an alias counts as the whole
/// anchored subtree again. Saturates instead of overflowing; stops the parse once over the limit.
class NodeCounter : public YAML::EventHandler {
 public:
  NodeCounter(const std::string& text, const std::string& file, uint64_t limit)
      : text_(text), file_(file), limit_(limit) {}

  void OnDocumentStart(const YAML::Mark& mark) override { root = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 1); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    // An alias inside the node its anchor names makes the graph a cycle: every walk of it never ends.
    for (const auto& [open, before] : stack_)
      if (open == anchor)
        throw Error(ErrorKind::bad_input, "an alias refers to a node that contains it (a cycle)",
                    at(file_, mark));
    const auto found = sizes_.find(anchor);
    leaf(mark, 0, found == sizes_.end() ? 1 : found->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string&) override {
    if (tag == "!" && mark.pos >= 0 && static_cast<size_t>(mark.pos) < text_.size()) {
      const size_t open = static_cast<size_t>(mark.pos);
      if ((text_[open] == '"' || text_[open] == '\'') && !quote_closes(text_, open))
        throw Error(ErrorKind::bad_input,
                    std::string("YAML syntax error: the quoted string opened here (") + text_[open] +
                        ") is never closed",
                    at(file_, mark));
    }
    leaf(mark, anchor, 1);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

  /// Where the document's root node stands (its start, until a node is seen).
  YAML::Mark root;

 private:
  void add(const YAML::Mark& mark, uint64_t nodes) {
    if (total_ == 0) root = mark;
    total_ = nodes > limit_ - std::min(total_, limit_) ? limit_ + 1 : total_ + nodes;
    if (total_ > limit_)
      throw Error(ErrorKind::bad_input,
                  "the document holds more than " + std::to_string(limit_) +
                      " nodes (aliases counted as what they repeat); refusing to read it",
                  at(file_, mark));
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, uint64_t nodes) {
    add(mark, nodes);
    if (anchor) sizes_[anchor] = nodes;
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, 1);
    stack_.push_back({anchor, total_ - 1});
  }
  void close() {
    if (stack_.empty()) return;
    const auto [anchor, before] = stack_.back();
    stack_.pop_back();
    if (anchor) sizes_[anchor] = total_ - before;
  }

  const std::string& text_;
  const std::string& file_;
  uint64_t limit_;
  uint64_t total_ = 0;
  std::map<YAML::anchor_t, uint64_t> sizes_;
  std::vector<std::pair<YAML::anchor_t, uint64_t>> stack_;
};

/// Where the first NUL byte of the text is, as a location.
SourceLocation nul_location(const std::string& text, size_t at_byte, const std::string& file) {
  int line = 1, column = 1;
  for (size_t i = 0; i < at_byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {file, line, column, ""};
}

}  // namespace

YAML::Node load_yaml_text(const std::string& text, const std::string& file, uint64_t node_limit) {
  if (const size_t nul = text.find('\0'); nul != std::string::npos)
    throw Error(ErrorKind::bad_input, "a NUL byte: a YAML document is text", nul_location(text, nul, file));
  try {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    NodeCounter counter(text, file, node_limit);
    parser.HandleNextDocument(counter);
    NodeCounter second(text, file, node_limit);
    if (parser.HandleNextDocument(second))
      throw Error(ErrorKind::bad_input,
                  "a file holds one YAML document, found a second one (remove the '---' separator)",
                  at(file, second.root));
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw Error(ErrorKind::bad_input, "YAML syntax error: " + e.msg, at(file, e.mark));
  }
}

YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what, int64_t byte_limit,
                          uint64_t node_limit) {
  return load_yaml_text(read_input_file(file, what, byte_limit), file.string(), node_limit);
}

}  // namespace tunefuzz
