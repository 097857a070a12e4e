package io.kdra.core.cel;

import static org.assertj.core.api.Assertions.assertThat;

import dev.cel.common.internal.EnvVisitable;
import dev.cel.common.internal.EnvVisitor;
import dev.cel.expr.Decl;
import dev.cel.parser.CelMacro;
import io.kdra.core.cel.compat.StandardFunctionsInUpstreamOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class StandardFunctionsInUpstreamOrderTest {

  /** Every function's overloads as the selector compiler declares them, per declaration scope. */
  private static Map<String, List<List<String>>> declared() {
    Map<String, List<List<String>>> declared = new TreeMap<>();
    ((EnvVisitable) DeviceSelectorEnvironment.create().compiler())
        .accept(
            new EnvVisitor() {
              @Override
              public void visitDecl(String name, List<Decl> decls) {
                for (Decl d : decls) {
                  if (d.hasFunction()) {
                    List<String> ids = new ArrayList<>();
                    d.getFunction().getOverloadsList().forEach(o -> ids.add(o.getOverloadId()));
                    declared.computeIfAbsent(name, k -> new ArrayList<>()).add(ids);
                  }
                }
              }

              @Override
              public void visitMacro(CelMacro macro) {}
            });
    return declared;
  }

  @Test
  void everyFunctionTriesTheOverloadsItSharesWithUpstreamInUpstreamsOrder() {
    Map<String, List<List<String>>> declared = declared();
    assertThat(declared).containsKeys("-_", "_+_", "_<_", "_[_]", "string", "size", "int");
    declared.forEach(
        (name, scopes) -> {
          // one scope: cel-java orders a function declared in two scopes by hash
          assertThat(scopes).as(name).hasSize(1);
          List<String> upstream =
              StandardFunctionsInUpstreamOrder.upstreamOrder().getOrDefault(name, List.of());
          List<String> ours = scopes.get(0).stream().filter(upstream::contains).toList();
          assertThat(ours).as(name).isEqualTo(upstream.stream().filter(ours::contains).toList());
        });
  }

  @Test
  void negationTriesDoubleFirstAsCelGoDoes() {
    assertThat(declared().get("-_").get(0)).containsExactly("negate_double", "negate_int64");
    assertThat(declared().get("_[_]").get(0))
        .containsExactly(
            "index_list", "index_map", "optional_list_index_int", "optional_map_index_value");
  }

  @Test
  void declaresTheConversionCelJavaLacksButNotDurationOfInt() {
    assertThat(declared().get("duration").get(0)).doesNotContain("int64_to_duration");
    assertThat(declared().get("int").get(0))
        .contains(StandardFunctionsInUpstreamOrder.DURATION_TO_INT);
  }
}
