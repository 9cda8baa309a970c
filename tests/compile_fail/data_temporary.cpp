// expect: tyche::data\(x\) keeps a view of 'x', not a copy: pass a named container that outlives the model, not a temporary
// data() of a temporary would keep a view of storage destroyed at the end of the statement.
// (Kept to a bare call: data(temporary) returns void, so using its result in an expression, e.g.
// sum(data(std::vector<double>{...}) - mu), adds an unrelated "no match for operator-" error.)
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  data(std::vector<double>{1.0, 2.0});
}
