// collsim._collsim: the extension under the `collsim` Python package (python/collsim/). It
// exposes one function, run(args), that runs a collsim command in-process (cli/app.hpp) and
// returns its standard output; collsim/__init__.py builds the arguments from keyword arguments
// and parses the JSON. collsim's user errors become collsim.Error and usage errors
// collsim.UsageError, with the message the binary prints after "collsim: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "cli/app.hpp"
#include "topology/error.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_collsim, m) {
  m.doc() = "collsim's command line, run in-process (use the collsim package, not this module)";
  py::register_exception<collsim::Error>(m, "Error", PyExc_ValueError);
  py::register_exception<CLI::ParseError>(m, "UsageError", PyExc_TypeError);
  // Other Python threads run while a command simulates (run_command serializes commands).
  m.def("run", &collsim::run_command, py::arg("args"), py::call_guard<py::gil_scoped_release>(),
        "Runs `collsim ARGS...` and returns what it printed on standard output.");
}
