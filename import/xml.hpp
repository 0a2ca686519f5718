// A reader for the XML subset NCCL writes (NCCL_TOPO_DUMP_FILE, NCCL_TOPO_FILE): elements with
// quoted attributes, self-closing tags, comments and an optional <?xml ...?> declaration. Text
// between tags is ignored; there are no entities, CDATA or namespaces in NCCL's files.
//
//   const XmlElement root = parse_xml(text, "system.xml");   // ImportError on malformed input
//   for (const XmlElement& cpu : root.children) cpu.attribute("numaid");
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "topology/error.hpp"

namespace collsim {

// A description (topology dump, nvidia-smi output, NCCL log) that cannot be imported; the message
// starts with "FILE:LINE:COL:" (or "FILE:LINE:") and says what was expected.
class ImportError : public Error {
 public:
  using Error::Error;
};

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // in file order
  std::vector<XmlElement> children;
  int line = 0;
  int column = 0;

  std::optional<std::string> attribute(std::string_view key) const;
  // "FILE:LINE:COL: <name>" for messages about this element.
  std::string where(std::string_view file) const;
};

// The document's root element. Throws ImportError naming FILE:LINE:COL on a malformed tag, an
// unclosed or mismatched element, or content after the root.
XmlElement parse_xml(std::string_view text, std::string_view file);

}  // namespace collsim
