// Apache Avro's own verdicts for the pairs run_oracle.py generates: one line per (reader, writer) pair, in input
// order: the verdict (PARSE_ERROR when Java's Schema.Parser refuses either schema, COMPATIBLE, or INCOMPATIBLE
// followed by the incompatibilities as TYPE@location, EXCEPTION when the check throws, which Confluent reports as
// incompatible), then a tab and each schema's Schema.toString() (or ERROR), tab-separated.
// Run with the class path of pom.xml: java -cp CLASSPATH AvroOracle.java PAIRS_FILE

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;

public class AvroOracle {
  public static void main(String[] args) throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    PrintWriter out = new PrintWriter(System.out, false, StandardCharsets.UTF_8);
    try (BufferedReader in = Files.newBufferedReader(Paths.get(args[0]), StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        JsonNode pair = mapper.readTree(line);
        String reader = pair.get(0).textValue();
        String writer = pair.get(1).textValue();
        out.println(verdict(reader, writer) + "\t" + canonical(reader) + "\t" + canonical(writer));
      }
    }
    out.flush();
  }

  static String canonical(String text) {
    try {
      return new Schema.Parser().parse(text).toString();
    } catch (Exception e) {
      return "ERROR";
    }
  }

  static String verdict(String readerText, String writerText) {
    Schema reader;
    Schema writer;
    try {
      reader = new Schema.Parser().parse(readerText);
      writer = new Schema.Parser().parse(writerText);
    } catch (Exception e) {
      return "PARSE_ERROR";
    }
    try {
      SchemaCompatibility.SchemaCompatibilityResult result =
          SchemaCompatibility.checkReaderWriterCompatibility(reader, writer).getResult();
      if (result.getCompatibility() == SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
        return "COMPATIBLE";
      }
      StringBuilder s = new StringBuilder("INCOMPATIBLE");
      for (SchemaCompatibility.Incompatibility i : result.getIncompatibilities()) {
        s.append(' ').append(i.getType()).append('@').append(i.getLocation());
      }
      return s.toString();
    } catch (Exception e) {
      return "INCOMPATIBLE EXCEPTION";
    }
  }
}
