package io.kdra.core.cel.k8slib;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The validators of the Kubernetes format library, each expected error list the one
 * k8s.io/apiserver v0.36.3's {@code library.ConstantFormats} returns for the input (taken from a Go
 * program calling them): {@code format.x().validate(s)} gives these lists to selectors, so they
 * must be equal word for word.
 */
class KubernetesFormatsTest {

  static Stream<Arguments> upstreamResults() {
    return Stream.of(
        arguments(
            "dns1123Label",
            "",
            List.of(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
        arguments("dns1123Label", "abc-def", List.of()),
        arguments(
            "dns1123Label",
            "-abc",
            List.of(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
        arguments("dns1123Label", "ab.cd", List.of("must not contain dots")),
        arguments(
            "dns1123Label",
            "AB",
            List.of(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
        arguments(
            "dns1123Label",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            List.of("must be no more than 63 characters")),
        arguments(
            "dns1123Label",
            "\u00e9-",
            List.of(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
        arguments("dns1123LabelPrefix", "abc-", List.of()),
        arguments("dns1123LabelPrefix", "a-", List.of()),
        arguments(
            "dns1123LabelPrefix",
            "\u00e9-",
            List.of(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")),
        arguments("dns1123Subdomain", "ab.cd", List.of()),
        arguments(
            "dns1123Subdomain",
            "-abc",
            List.of(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
        arguments(
            "dns1123Subdomain",
            "AB",
            List.of(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
        arguments(
            "dns1035Label",
            "0abc",
            List.of(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")),
        arguments(
            "dns1035Label",
            "a_b",
            List.of(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")),
        arguments("dns1035Label", "abc", List.of()),
        arguments("dns1035LabelPrefix", "abc-", List.of()),
        arguments("qualifiedName", "example.com/name", List.of()),
        arguments("qualifiedName", "/name", List.of("prefix part must be non-empty")),
        arguments(
            "qualifiedName",
            "example.com/",
            List.of(
                "name part must be non-empty",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
        arguments(
            "qualifiedName",
            "a/b/c",
            List.of(
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")),
        arguments(
            "qualifiedName",
            "Example.com/Name",
            List.of(
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")),
        arguments(
            "qualifiedName",
            "_abc",
            List.of(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
        arguments(
            "qualifiedName",
            "",
            List.of(
                "name part must be non-empty",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")),
        arguments("labelValue", "", List.of()),
        arguments("labelValue", "my.name", List.of()),
        arguments(
            "labelValue",
            "_abc",
            List.of(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
        arguments(
            "labelValue",
            "abc\n",
            List.of(
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
        arguments(
            "labelValue",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            List.of("must be no more than 63 bytes")),
        arguments("uri", "https://example.com/path?q=1", List.of()),
        arguments("uri", "relative", List.of("parse \"relative\": invalid URI for request")),
        arguments("uri", "", List.of("parse \"\": empty url")),
        arguments("uri", "*", List.of()),
        arguments("uri", ":foo", List.of("parse \":foo\": missing protocol scheme")),
        arguments(
            "uri",
            "http://a b/",
            List.of("parse \"http://a b/\": invalid character \" \" in host name")),
        arguments(
            "uri",
            "http://host:port/",
            List.of("parse \"http://host:port/\": invalid port \":port\" after host")),
        arguments(
            "uri",
            "http://h:1:2/",
            List.of("parse \"http://h:1:2/\": invalid port \":1:2\" after host")),
        arguments(
            "uri",
            "ssh://a:b:c/",
            List.of("parse \"ssh://a:b:c/\": invalid port \":c\" after host")),
        arguments(
            "uri", "http://h/%zz", List.of("parse \"http://h/%zz\": invalid URL escape \"%zz\"")),
        arguments(
            "uri", "http://h%41/", List.of("parse \"http://h%41/\": invalid URL escape \"%41\"")),
        arguments(
            "uri",
            "http://us er@h/",
            List.of("parse \"http://us er@h/\": net/url: invalid userinfo")),
        arguments(
            "uri", "http://[1.2.3.4]/", List.of("parse \"http://[1.2.3.4]/\": invalid IP-literal")),
        arguments(
            "uri",
            "http://[fe80::zz]/",
            List.of(
                "parse \"http://[fe80::zz]/\": invalid host: ParseAddr(\"fe80::zz\"): each colon-separated field must have at least one digit (at \"zz\")")),
        arguments("uri", "http://[fe80::1%25en0]/", List.of()),
        arguments(
            "uri",
            "http://[::ffff:1.2.3]/",
            List.of(
                "parse \"http://[::ffff:1.2.3]/\": invalid host: ParseAddr(\"::ffff:1.2.3\"): IPv4 address too short")),
        arguments(
            "uri",
            "http://[1::2::3]/",
            List.of(
                "parse \"http://[1::2::3]/\": invalid host: ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")")),
        arguments("uri", "http://h]/", List.of()),
        arguments("uri", "http://a[b]/", List.of("parse \"http://a[b]/\": invalid IP-literal")),
        arguments("uri", "mailto:x@y", List.of()),
        arguments("uri", "http://h/\u00e9", List.of()),
        arguments("uri", "http://\u00e9/", List.of()),
        arguments("uuid", "123e4567-e89b-12d3-a456-426614174000", List.of()),
        arguments("uuid", "123E4567E89B12D3A456426614174000", List.of()),
        arguments("uuid", "not-a-uuid", List.of("does not match the UUID format")),
        arguments("byte", "aGVsbG8=", List.of()),
        arguments("byte", "aGVsbG8", List.of("invalid base64")),
        arguments("byte", "", List.of("invalid base64")),
        arguments("date", "2024-02-29", List.of()),
        arguments("date", "2023-02-29", List.of("invalid date")),
        arguments("date", "2024-13-01", List.of("invalid date")),
        arguments("date", "2024-1-01", List.of("invalid date")),
        arguments("datetime", "2024-01-01T10:00:00Z", List.of()),
        arguments("datetime", "2024-01-01t25:00:00z", List.of("invalid datetime")),
        arguments("datetime", "2024-01-01T10:00:00.123+01:00", List.of()),
        arguments("datetime", "2024-01-01T10:00:00", List.of("invalid datetime")),
        arguments("datetime", "2024-01-01T10:00:00Zt", List.of()));
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("upstreamResults")
  void validateGivesUpstreamsErrors(String format, String input, List<String> errors) {
    assertThat(KubernetesFormats.ALL.get(format).validator().apply(input)).isEqualTo(errors);
  }
}
