package io.kdra.it.support;

import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.zip.GZIPInputStream;

/**
 * An OTLP/HTTP trace receiver in the test JVM on a loopback port: it accepts {@code
 * ExportTraceServiceRequest}s (binary protobuf) on any path and keeps each span's service, name,
 * trace id and string attributes. The protobuf is read field by field (the OTLP message classes are
 * not on the test classpath): resourceSpans(1) / resource(1).attributes(1), and scopeSpans(2) /
 * spans(2) with traceId(1), spanId(2), parentSpanId(4), name(5), attributes(9) and links(13) with
 * traceId(1), spanId(2).
 */
public final class OtlpReceiver implements AutoCloseable {

  /**
   * @param links the linked spans, each as {@code traceId-spanId}
   */
  public record ReceivedSpan(
      String service,
      String name,
      String traceId,
      String spanId,
      String parentSpanId,
      Map<String, String> attributes,
      List<String> links) {

    /** Whether this span links to {@code other}. */
    public boolean linksTo(ReceivedSpan other) {
      return links.contains(other.traceId() + "-" + other.spanId());
    }
  }

  private final HttpServer server;
  private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();

  public OtlpReceiver() {
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext(
        "/",
        exchange -> {
          try (exchange) {
            InputStream body = exchange.getRequestBody();
            if ("gzip"
                .equalsIgnoreCase(exchange.getRequestHeaders().getFirst("Content-Encoding"))) {
              body = new GZIPInputStream(body);
            }
            byte[] bytes = body.readAllBytes();
            int status = 200;
            try {
              decode(bytes);
            } catch (InvalidProtocolBufferException e) {
              status = 400;
            }
            exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
            // an empty ExportTraceServiceResponse
            exchange.sendResponseHeaders(status, -1);
          }
        });
    server.start();
  }

  /** Properties that make a Quarkus service export its spans here, promptly. */
  public Map<String, String> serviceProperties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("quarkus.otel.sdk.disabled", "false");
    p.put("quarkus.otel.exporter.otlp.protocol", "http/protobuf");
    p.put(
        "quarkus.otel.exporter.otlp.endpoint", "http://127.0.0.1:" + server.getAddress().getPort());
    p.put("quarkus.otel.bsp.schedule.delay", "200ms");
    return p;
  }

  public List<ReceivedSpan> spans() {
    return List.copyOf(spans);
  }

  private void decode(byte[] request) throws InvalidProtocolBufferException {
    for (ByteString resourceSpans : lengthDelimited(UnknownFieldSet.parseFrom(request), 1)) {
      UnknownFieldSet rs = UnknownFieldSet.parseFrom(resourceSpans);
      Map<String, String> resource = new LinkedHashMap<>();
      for (ByteString r : lengthDelimited(rs, 1)) {
        resource.putAll(attributes(UnknownFieldSet.parseFrom(r), 1));
      }
      String service = resource.getOrDefault("service.name", "?");
      for (ByteString scopeSpans : lengthDelimited(rs, 2)) {
        for (ByteString s : lengthDelimited(UnknownFieldSet.parseFrom(scopeSpans), 2)) {
          UnknownFieldSet span = UnknownFieldSet.parseFrom(s);
          List<String> links = new java.util.ArrayList<>();
          for (ByteString l : lengthDelimited(span, 13)) {
            UnknownFieldSet link = UnknownFieldSet.parseFrom(l);
            links.add(hex(link, 1) + "-" + hex(link, 2));
          }
          spans.add(
              new ReceivedSpan(
                  service,
                  string(span, 5),
                  hex(span, 1),
                  hex(span, 2),
                  hex(span, 4),
                  attributes(span, 9),
                  List.copyOf(links)));
        }
      }
    }
  }

  private static List<ByteString> lengthDelimited(UnknownFieldSet set, int field) {
    return set.hasField(field) ? set.getField(field).getLengthDelimitedList() : List.of();
  }

  private static String string(UnknownFieldSet set, int field) {
    List<ByteString> values = lengthDelimited(set, field);
    return values.isEmpty() ? "" : values.get(0).toStringUtf8();
  }

  private static String hex(UnknownFieldSet set, int field) {
    List<ByteString> values = lengthDelimited(set, field);
    return values.isEmpty() ? "" : HexFormat.of().formatHex(values.get(0).toByteArray());
  }

  /** String-valued KeyValue attributes (key 1, AnyValue 2 with string_value 1). */
  private static Map<String, String> attributes(UnknownFieldSet set, int field)
      throws InvalidProtocolBufferException {
    Map<String, String> out = new LinkedHashMap<>();
    for (ByteString kv : lengthDelimited(set, field)) {
      UnknownFieldSet keyValue = UnknownFieldSet.parseFrom(kv);
      List<ByteString> value = lengthDelimited(keyValue, 2);
      if (!value.isEmpty()) {
        UnknownFieldSet any = UnknownFieldSet.parseFrom(value.get(0));
        if (any.hasField(1)) {
          out.put(string(keyValue, 1), string(any, 1));
        }
      }
    }
    return out;
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
