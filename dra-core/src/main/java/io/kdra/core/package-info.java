/** Pure DRA logic: model helpers, the CEL environment and the allocator. No I/O, no clocks. */
package io.kdra.core;
