#include <thread>
#include <random>
#include <sstream>
#include <fstream>
int main(){}
