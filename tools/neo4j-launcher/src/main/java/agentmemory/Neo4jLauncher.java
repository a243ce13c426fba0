package agentmemory;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;

/**
 * Starts an embedded Neo4j Community DBMS with Bolt on 127.0.0.1:PORT and runs until killed.
 *
 * <p>Usage: {@code java -cp ... agentmemory.Neo4jLauncher DATA_DIR PORT}. When the environment
 * variable {@code NEO4J_PASSWORD} is set, auth is enabled and user {@code neo4j} gets that password
 * (Neo4j wants at least 8 characters); otherwise auth is disabled, which is only acceptable because
 * Bolt listens on loopback. Prints {@code READY bolt://127.0.0.1:PORT} once Bolt accepts connections.
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: Neo4jLauncher DATA_DIR PORT");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = System.getenv("NEO4J_PASSWORD");
        boolean auth = password != null && !password.isEmpty();

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                // Tests are small: keep the page cache and transaction logs modest.
                .setConfig(GraphDatabaseSettings.pagecache_memory, 128L * 1024 * 1024)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "neo4j-shutdown"));

        if (auth) {
            // The default user starts with password "neo4j" and must change it; do that once here
            // so clients can log in straight away.
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        }
        // Touch the default database so it is online before we announce readiness.
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");

        System.out.println("READY bolt://127.0.0.1:" + port + " auth=" + (auth ? "on" : "off"));
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
