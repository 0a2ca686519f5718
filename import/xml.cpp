#include "import/xml.hpp"

#include <fmt/format.h>

#include <cctype>

namespace collsim {

std::optional<std::string> XmlElement::attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::string XmlElement::where(std::string_view file) const {
  return fmt::format("{}:{}:{}: <{}>", file, line, column, name);
}

namespace {

// A cursor over the text that knows its line and column, for messages.
class Reader {
 public:
  Reader(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  bool done() const { return pos_ >= text_.size(); }
  char peek() const { return done() ? '\0' : text_[pos_]; }
  bool starts_with(std::string_view s) const { return text_.substr(pos_).starts_with(s); }
  int line() const { return line_; }
  int column() const { return column_; }

  void advance(std::size_t n = 1) {
    for (std::size_t i = 0; i < n && !done(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
    }
  }
  void skip_space() {
    while (!done() && std::isspace(static_cast<unsigned char>(peek()))) advance();
  }
  // Skips past `end`; an error naming `what` when the text ends first.
  void skip_past(std::string_view end, std::string_view what) {
    const int l = line_, c = column_;
    const std::size_t at = text_.find(end, pos_);
    if (at == std::string_view::npos)
      fail(l, c, fmt::format("{} is never closed by \"{}\"", what, end));
    advance(at + end.size() - pos_);
  }
  std::string name() {
    std::string n;
    while (!done() && (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' ||
                       peek() == '-' || peek() == ':' || peek() == '.')) {
      n += peek();
      advance();
    }
    return n;
  }
  [[noreturn]] void fail(int l, int c, const std::string& what) const {
    throw ImportError(fmt::format("{}:{}:{}: {}", file_, l, c, what));
  }
  [[noreturn]] void fail(const std::string& what) const { fail(line_, column_, what); }
  // What stands at the cursor, for "expected X, got Y": up to 12 characters of this line.
  std::string got() const {
    if (done()) return "the end of the file";
    std::string_view rest = text_.substr(pos_, std::min<std::size_t>(12, text_.size() - pos_));
    rest = rest.substr(0, rest.find_first_of("\r\n"));
    return rest.empty() ? "the end of the line" : fmt::format("\"{}\"", rest);
  }

 private:
  std::string_view text_;
  std::string_view file_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// Comments, declarations and (inside an element) text up to the next tag. Outside the root only
// white space may stand between them.
void skip_misc(Reader& r, bool inside) {
  while (!r.done()) {
    if (r.starts_with("<!--")) {
      r.skip_past("-->", "a comment");
    } else if (r.starts_with("<?")) {
      r.skip_past("?>", "an XML declaration");
    } else if (r.peek() == '<') {
      return;
    } else if (inside || std::isspace(static_cast<unsigned char>(r.peek()))) {
      r.advance();
    } else {
      r.fail(fmt::format("expected an XML element ('<'), got {}", r.got()));
    }
  }
}

std::string attribute_value(Reader& r) {
  const char quote = r.peek();
  if (quote != '"' && quote != '\'')
    r.fail(fmt::format("expected a quoted value, got {}", r.got()));
  const int l = r.line(), c = r.column();
  r.advance();
  std::string v;
  while (!r.done() && r.peek() != quote) {
    v += r.peek();
    r.advance();
  }
  if (r.done()) r.fail(l, c, "a quoted value is never closed");
  r.advance();
  return v;
}

XmlElement element(Reader& r, int depth) {
  if (depth > 64) r.fail("elements nested more than 64 deep");
  XmlElement e;
  e.line = r.line();
  e.column = r.column();
  r.advance();  // '<'
  e.name = r.name();
  if (e.name.empty()) r.fail(fmt::format("expected an element name after '<', got {}", r.got()));
  for (;;) {
    r.skip_space();
    if (r.starts_with("/>")) {
      r.advance(2);
      return e;
    }
    if (r.peek() == '>') {
      r.advance();
      break;
    }
    std::string key = r.name();
    if (key.empty()) {
      r.fail(fmt::format("in <{}>: expected an attribute, '>' or '/>', got {}", e.name, r.got()));
    }
    r.skip_space();
    if (r.peek() != '=')
      r.fail(fmt::format("in <{}>: expected '=' after {}, got {}", e.name, key, r.got()));
    r.advance();
    r.skip_space();
    e.attributes.emplace_back(std::move(key), attribute_value(r));
  }
  for (;;) {
    skip_misc(r, true);
    if (r.done()) {
      r.fail(e.line, e.column, fmt::format("<{}> is never closed (no </{}>)", e.name, e.name));
    }
    if (r.starts_with("</")) {
      const int l = r.line(), c = r.column();
      r.advance(2);
      const std::string closing = r.name();
      r.skip_space();
      if (closing != e.name || r.peek() != '>') {
        r.fail(l, c,
               fmt::format("expected </{}> closing <{}> of line {}, got </{}", e.name, e.name,
                           e.line, closing));
      }
      r.advance();
      return e;
    }
    e.children.push_back(element(r, depth + 1));
  }
}

}  // namespace

XmlElement parse_xml(std::string_view text, std::string_view file) {
  Reader r(text, file);
  skip_misc(r, false);
  if (r.done()) r.fail("expected an XML element, got an empty document");
  XmlElement root = element(r, 0);
  skip_misc(r, false);
  if (!r.done())
    r.fail(fmt::format("content after the root element </{}>: {}", root.name, r.got()));
  return root;
}

}  // namespace collsim
