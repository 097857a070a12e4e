package io.kdra.alloc.cli;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Finds the deserializer of a bean property the first time a value for it is read, not when the
 * bean's deserializer is built. Jackson resolves every property's deserializer up front, so the
 * first Pod it reads builds deserializers for the whole Pod model (every volume source, probe and
 * security context fabric8 has), about a hundred classes introspected by reflection in a JVM that
 * has not compiled any of that code yet: most of what {@code dra-alloc} spent reading a large dump
 * (docs/dev/benchmarks.md). A dump names a few of those fields; the rest are never built. Each
 * property ends up with the deserializer Jackson would have given it, found the same way, so what
 * is read (and how a bad field is reported) does not change. Jackson has no setting for this.
 */
final class LazyPropertyDeserializers extends BeanDeserializerModifier {

  /** A module that makes every bean deserializer of a mapper find its properties' lazily. */
  static SimpleModule module() {
    return new SimpleModule("lazy-property-deserializers")
        .setDeserializerModifier(new LazyPropertyDeserializers());
  }

  @Override
  public BeanDeserializerBuilder updateBuilder(
      DeserializationConfig config, BeanDescription bean, BeanDeserializerBuilder builder) {
    List<SettableBeanProperty> deferred = new ArrayList<>();
    for (Iterator<SettableBeanProperty> it = builder.getProperties(); it.hasNext(); ) {
      SettableBeanProperty property = it.next();
      // one set by an annotation (@JsonDeserialize(using = ...)) is already there; scalars and
      // strings are cheap to find and would only add an indirection
      if (!property.hasValueDeserializer()
          && !property.getType().isPrimitive()
          && !property.getType().hasRawClass(String.class)) {
        deferred.add(property);
      }
    }
    for (SettableBeanProperty property : deferred) {
      builder.addOrReplaceProperty(property.withValueDeserializer(new Deferred(property)), true);
    }
    return builder;
  }

  /** Stands in for a property's deserializer until the first value of the property is read. */
  private static final class Deferred extends JsonDeserializer<Object> {

    private final SettableBeanProperty property;
    // written once per property; a race finds the same (cached) deserializer twice
    private volatile JsonDeserializer<Object> target;

    Deferred(SettableBeanProperty property) {
      this.property = property;
    }

    private JsonDeserializer<Object> target(DeserializationContext ctxt)
        throws JsonMappingException {
      JsonDeserializer<Object> found = target;
      if (found == null) {
        // what BeanDeserializerBase.resolve would have asked for this property
        found = ctxt.findContextualValueDeserializer(property.getType(), property);
        target = found;
      }
      return found;
    }

    @Override
    public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      return target(ctxt).deserialize(p, ctxt);
    }

    @Override
    public Object deserializeWithType(
        JsonParser p, DeserializationContext ctxt, TypeDeserializer typeDeserializer)
        throws IOException {
      return target(ctxt).deserializeWithType(p, ctxt, typeDeserializer);
    }

    @Override
    public Object getNullValue(DeserializationContext ctxt) throws JsonMappingException {
      return target(ctxt).getNullValue(ctxt);
    }

    @Override
    public Object getEmptyValue(DeserializationContext ctxt) throws JsonMappingException {
      return target(ctxt).getEmptyValue(ctxt);
    }
  }
}
