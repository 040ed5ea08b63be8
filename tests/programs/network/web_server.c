/* A small web server: one connection, one request "GET /NAME ...", and the reply is the
 * file htdocs/NAME (200) or 404. With --sym-packets 1 N --sym-files 1 4 --sym-dir htdocs, a
 * test asks for A and gets the symbolic file's bytes (issue 44). The method is matched
 * case-insensitively (strncasecmp: musl's). */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	int listener = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in address;
	memset(&address, 0, sizeof address);
	address.sin_family = AF_INET;
	address.sin_port = htons(8080);
	if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 1))
		return 2;
	int client = accept(listener, NULL, NULL);
	if (client < 0)
		return 3;
	char request[64] = {0};
	ssize_t got = recv(client, request, sizeof request - 1, 0);
	if (got < 6 || strncasecmp(request, "GET /", 5) != 0) {
		send(client, "HTTP/1.0 400 Bad Request\r\n\r\n", 28, 0);
		puts("400");
		return 0;
	}
	char path[32] = "htdocs/";
	size_t length = strlen(path);
	for (const char *name = request + 5; *name && *name != ' ' && length < 16; name++)
		path[length++] = *name;
	path[length] = 0;
	int file = open(path, O_RDONLY);
	if (file < 0) {
		send(client, "HTTP/1.0 404 Not Found\r\n\r\n", 26, 0);
		printf("404 %s\n", path);
		return 0;
	}
	char body[16];
	ssize_t size = read(file, body, sizeof body);
	if (size < 0) {  /* a directory: "GET /" */
		send(client, "HTTP/1.0 403 Forbidden\r\n\r\n", 26, 0);
		printf("403 %s\n", path);
		return 0;
	}
	send(client, "HTTP/1.0 200 OK\r\n\r\n", 19, 0);
	send(client, body, size, 0);
	printf("200 %s %zd\n", path, size);
	return 0;
}
